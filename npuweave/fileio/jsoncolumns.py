"""Indented JSON text of rows held as columns, without a dict per row.

A row source (``npuweave.metrics.records``) whose ``json_plain()`` holds gives its rows as one
Python list per field (``columns(lo, hi)``). Each column becomes text in one pass chosen by
the types in it (``float.__repr__`` for floats, as Python's ``json`` writes them; ``int``'s
repr; ``true``/``false``/``null``; strings through the C encoder once per distinct string),
and the rows are the value texts interleaved with the keys and the indentation. The text is
byte for byte Python's indented JSON of the rows (``tests/report/test_json_stream`` checks
it), at about 0.4 of the encoder's time for a serve record (the encoder escapes every key of
every row again). ``npuweave.fileio.formats`` calls it with its strict encoder: the one
place JSON is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

_NONE = type(None)


def column_text(values: list[Any], encode: Callable[[Any], str]) -> list[str]:
    """The JSON text of every value of one column (``encode``: a strict C encoder's)."""
    kinds = set(map(type, values))
    if kinds <= {float, _NONE}:
        nulls = values.count(None) if _NONE in kinds else 0
        if np.count_nonzero(~np.isfinite(np.array(values, dtype=np.float64))) != nulls:
            raise ValueError("Out of range float values are not JSON compliant")
        return ["null" if v is None else float.__repr__(v) for v in values] if nulls else \
            list(map(float.__repr__, values))
    if kinds == {int}:
        return list(map(int.__repr__, values))
    if kinds <= {bool, _NONE}:
        return ["null" if v is None else "true" if v else "false" for v in values]
    if kinds == {str}:
        text = {s: encode(s) for s in set(values)}
        return [text[s] for s in values]
    return [encode(v) for v in values]


def rows_text(columns: dict[str, list[Any]], keys: Sequence[str], pad_row: str, pad_item: str,
              encode: Callable[[Any], str]) -> str:
    """The rows of ``columns`` (keys in ``keys`` order) as Python's JSON indents them in a
    list: each ``{`` + newline + ``pad_item`` + items + newline + ``pad_row`` + ``}``, the
    rows joined by a comma, a newline and ``pad_row``.

    The pieces are laid out in one list, the text between two values of a row and the value
    texts alternating, each column placed with one slice assignment, and joined once.
    """
    k, n = len(keys), len(columns[keys[0]])
    first = "{\n" + pad_item + encode(keys[0]) + ": "
    between = ["\n" + pad_row + "},\n" + pad_row + first] + [
        ",\n" + pad_item + encode(key) + ": " for key in keys[1:]]
    parts: list[str] = [""] * (2 * k * n)
    for c, key in enumerate(keys):
        parts[2 * c::2 * k] = [between[c]] * n
        parts[2 * c + 1::2 * k] = column_text(columns[key], encode)
    parts[0] = first
    parts.append("\n" + pad_row + "}")
    return "".join(parts)
