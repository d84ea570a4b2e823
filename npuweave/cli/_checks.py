"""Checks shared by the serving-era commands, run before any work: policy options typed as
``key=value``, inputs a policy would ignore, and the contradictions between flags.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from npuweave.errors import ConfigError
from npuweave.fileio import values
from npuweave.fileio.values import MAX_NUMBER_CHARS

#: Policies that never read a request's priority (it still groups the result rows by level).
PRIORITY_BLIND = frozenset({"layerweaver", "layerweaver-plus", "sequential", "compute-only",
                            "memory-only", "fair", "aimt", "fcfs", "sjf", "sjf-p", "rr",
                            "np-fcfs", "np-sjf", "p-sjf", "rrb"})
#: Options the command sets itself from its own flags; a ``--scheduler-opt`` for one is a
#: second, contradicting way to say it.
OWNED = {"seed": "--seed", "standalone": "--standalone", "mechanism": "--preempt"}


def scheduler_options(pairs: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """``--scheduler-opt key=value`` pairs: values read as booleans, integers or finite
    floats when they look like one; each key once; ``seed`` belongs to ``--seed``.

    Examples
    --------
    >>> scheduler_options(["quantum_s=0.002", "failsafe=false"])
    {'quantum_s': 0.002, 'failsafe': False}
    """
    from npuweave.fileio.pairs import key_values

    out: dict[str, Any] = {}
    for key, val in key_values(pairs, "--scheduler-opt", "quantum_s=0.002").items():
        if not key.isidentifier():
            raise ConfigError(f"--scheduler-opt: {key[:60]!r} is not an option name; write "
                              "key=value (e.g. quantum_s=0.002)")
        if key == "seed":
            raise ConfigError("--scheduler-opt seed=...: the policy's seed is --seed; give it "
                              "there")
        out[key] = _value(key, val)
    return out


def _value(key: str, val: str) -> Any:
    low = val.lower()
    if low in ("true", "false"):
        return low == "true"
    if len(val) > MAX_NUMBER_CHARS and val.lstrip("+-").replace(".", "").isdigit():
        raise ConfigError(f"--scheduler-opt {key}: a {len(val)}-character number; give a "
                          "plain value")
    try:
        return int(val)
    except ValueError:
        pass
    try:
        number = float(val)
    except ValueError:
        return val
    if number != number or number in (float("inf"), float("-inf")):
        raise ConfigError(f"--scheduler-opt {key}={val}: give a finite number")
    return number


def owned_option(opts: dict[str, Any], key: str, flag_value: Any) -> None:
    """A ``--scheduler-opt`` that another flag also sets must agree with it."""
    if key in opts and flag_value is not None and opts[key] != flag_value:
        raise ConfigError(f"{OWNED.get(key, key)} {flag_value} contradicts --scheduler-opt "
                          f"{key}={opts[key]}; give one of them")


def priority_note(scheduler: str, priority: Any) -> str | None:
    """The note printed when ``--priority`` is given to a policy that does not read it."""
    if priority is None or scheduler not in PRIORITY_BLIND:
        return None
    return (f"{scheduler} does not rank requests by priority: --priority only groups the "
            "result rows by level (use hpf, hpf-p or a PREMA policy to act on it)")


class Value(click.ParamType):
    """A click type that parses with one of ``npuweave.fileio.values``' parsers, so a flag
    gets the same bounds and error wherever that kind of value is typed."""

    def __init__(self, name: str, parse: Callable[[Any, str], Any]) -> None:
        self.name = name
        self._parse = parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> Any:
        what = f"--{param.name.replace('_', '-')}" if param is not None and param.name else self.name
        return self._parse(value, what)  # a ConfigError: one 'error:' line, exit 2


def count(low: int, high: int) -> Value:
    """A whole-number flag in ``[low, high]``."""
    return Value("integer", lambda v, what: values.parse_int(v, what, low=low, high=high))


SEED = Value("seed", values.parse_seed)
#: A finite positive multiplier (``--span``, ``--time-scale``).
FACTOR = Value("number", lambda v, what: values.parse_ratio(v, what, 1)[0])


#: Requests per closed-loop stream (``schedule``, ``reproduce layerweaver``): past this a run
#: takes minutes with nothing to show.
MAX_REQUESTS = 100_000


def stream_bounds(batch: int, requests: int) -> None:
    """Refuse a batch size or a per-stream request count a closed-loop run cannot take."""
    from npuweave.workload.layer import check_batch

    check_batch(batch)
    if requests > MAX_REQUESTS:
        raise ConfigError(f"--requests {requests} is over the limit {MAX_REQUESTS} per stream "
                          "(npuweave.cli.schedule.MAX_REQUESTS); use fewer requests")
