"""``key=value`` lists, read one way everywhere: model specs (``bert-base:seq_len=32``), LLM
length and SLO texts, ``--scheduler-opt``. Each key once: a key given twice is an error
naming it, never "the last one wins"."""

from __future__ import annotations

from collections.abc import Iterable

from npuweave.errors import ConfigError


def key_values(items: Iterable[str], what: str, example: str) -> dict[str, str]:
    """The ``key=value`` items as a dict of stripped strings, each key at most once.

    ``what`` names the option or spec in the error; ``example`` shows a correct item.

    Examples
    --------
    >>> key_values(["seq_len=32", "batch = 4"], "model spec 'bert-base:...'", "seq_len=32")
    {'seq_len': '32', 'batch': '4'}
    """
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = str(item).partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"{what}: {str(item)[:60]!r} is not key=value; write e.g. "
                              f"{example}")
        if key in out:
            raise ConfigError(f"{what}: {key!r} is given twice; give it once")
        out[key] = value.strip()
    return out
