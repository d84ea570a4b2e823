"""The serving options as typed (``--arrivals``, ``--qps``, ``--duration``, ``--deadline``,
``--priority``, ``--batching``), parsed into plain values by the parsers of ``values``.

``serve``, ``sweep`` serve points and ``loadgen`` share these, so a flag means the same thing,
with the same bounds and error, in each. Contradictions and inputs that would be ignored are
errors here, before any work: a trace gives its own times, deadlines and priorities.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from npuweave.errors import ConfigError
from npuweave.fileio.values import (
    MAX_BATCH,
    MAX_TIME_S,
    parse_int,
    parse_priority,
    parse_rate,
    parse_time,
    per_model,
)

ARRIVAL_KINDS = ("poisson", "trace", "loadgen-server", "closed")
#: ``--duration`` when none is given (open-loop arrival processes only).
DEFAULT_DURATION = "1s"


def parse_seconds(text: Any, what: str) -> float:
    """A time that needs its unit (``15ms``, ``2s``); ``inf`` allowed (callers bound it).

    Examples
    --------
    >>> parse_seconds("15ms", "--deadline")
    0.015
    """
    return parse_time(text, what, low=-float("inf"), low_open=False)


def parse_qps(text: Any, n_models: int) -> tuple[float, ...]:
    """``--qps 300,80``: one finite rate > 0 per model (requests per second).

    Examples
    --------
    >>> parse_qps("300,80", 2)
    (300.0, 80.0)
    """
    return tuple(parse_rate(item, "--qps") for item in per_model(text, "--qps", n_models))


def parse_deadlines(text: Any, n_models: int) -> tuple[float, ...]:
    """``--deadline 15ms,130ms``: relative latency budgets in seconds (``none``: no deadline).

    Examples
    --------
    >>> parse_deadlines("15ms,none", 2)
    (0.015, inf)
    """
    return tuple(float("inf") if item.lower() in ("none", "inf") else
                 parse_time(item, "--deadline", high=1e9)
                 for item in per_model(text, "--deadline", n_models))


def parse_priorities(text: Any, n_models: int) -> tuple[int, ...]:
    """``--priority 1,9``: integer priorities >= 1 (larger is more important, as in PREMA).

    Examples
    --------
    >>> parse_priorities("1,9", 2)
    (1, 9)
    """
    return tuple(parse_priority(item, "--priority")
                 for item in per_model(text, "--priority", n_models))


def parse_duration(text: Any) -> float:
    """``--duration 2s``: a finite simulated duration > 0 in seconds.

    Examples
    --------
    >>> parse_duration("500ms")
    0.5
    """
    return parse_time(text, "--duration", high=MAX_TIME_S)


@dataclass(frozen=True, slots=True)
class ArrivalSpec:
    """Which arrival process to run: ``kind`` in ``ARRIVAL_KINDS``; ``path`` for traces."""

    kind: str
    path: str | None = None


def parse_arrivals(text: Any) -> ArrivalSpec:
    """``--arrivals poisson|trace:FILE|loadgen-server|closed``.

    Examples
    --------
    >>> parse_arrivals("trace:requests.csv")
    ArrivalSpec(kind='trace', path='requests.csv')
    """
    kind, _, rest = str(text).strip().partition(":")
    if kind == "trace":
        if not rest:
            raise ConfigError("--arrivals: 'trace' needs a file: trace:requests.csv")
        return ArrivalSpec("trace", rest)
    if kind not in ARRIVAL_KINDS or rest:
        raise ConfigError(f"--arrivals: {str(text)[:80]!r}; choose one of: poisson, "
                          "trace:FILE, loadgen-server, closed")
    return ArrivalSpec(kind)


@dataclass(frozen=True, slots=True)
class ArrivalFlags:
    """The arrival options, parsed: ``qps``/``duration_s`` for generated arrivals only."""

    spec: ArrivalSpec
    qps: tuple[float, ...] | None
    duration_s: float | None
    deadline_s: tuple[float, ...] | None
    priority: tuple[int, ...] | None


def parse_arrival_flags(spec: Any, n_models: int, qps: Any = None, duration: Any = None,
                        deadline: Any = None, priority: Any = None) -> ArrivalFlags:
    """All the arrival options at once; a flag the chosen process would ignore is an error.

    Examples
    --------
    >>> parse_arrival_flags("poisson", 1, "100", "50ms").duration_s
    0.05
    """
    kind = parse_arrivals(spec)
    if kind.kind == "closed":
        raise ConfigError("--arrivals closed: closed loops are 'npuweave schedule' (same "
                          "engine); use poisson, loadgen-server or trace:FILE here")
    dl = parse_deadlines(deadline, n_models) if deadline is not None else None
    pr = parse_priorities(priority, n_models) if priority is not None else None
    if kind.kind == "trace":
        given = [f for f, v in (("--qps", qps), ("--duration", duration), ("--deadline", dl),
                                ("--priority", pr)) if v is not None]
        if given:
            raise ConfigError(f"{', '.join(given)} do(es) not apply to --arrivals trace:FILE: "
                              "the file gives each request's time, priority and deadline "
                              "(columns time, model, priority, deadline); leave "
                              f"{' and '.join(given)} out or put the values in the trace")
        return ArrivalFlags(kind, None, None, None, None)
    if qps is None:
        raise ConfigError(f"--arrivals {spec} needs --qps, one rate per model (e.g. "
                          f"--qps {','.join(['100'] * n_models)})")
    return ArrivalFlags(kind, parse_qps(qps, n_models),
                        parse_duration(DEFAULT_DURATION if duration is None else duration),
                        dl, pr)


@dataclass(frozen=True, slots=True)
class Batching:
    """Triton-style dynamic batching per model: wait at most ``window_s`` for a batch of at
    most ``max_batch`` requests (the defaults: every request alone, no waiting). The one
    batching spec of ``serve``, the serving loops (``npuweave.sim.lwserve``) and the CLI."""

    window_s: float = 0.0
    max_batch: int = 1


def parse_batching(text: Any) -> Batching | None:
    """``--batching none|window:2ms:max16``; ``None`` means every request runs alone.

    Examples
    --------
    >>> parse_batching("window:2ms:max16")
    Batching(window_s=0.002, max_batch=16)
    """
    text = str(text).strip()
    if text == "none":
        return None
    parts = text.split(":")
    if len(parts) != 3 or parts[0] != "window" or not re.fullmatch(r"max\d{1,12}", parts[2]):
        raise ConfigError(f"--batching: {text[:80]!r}; write 'none' or 'window:<time>:max<N>' "
                          "(e.g. window:2ms:max16)")
    window = parse_time(parts[1], "--batching window", low=0.0, low_open=False, high=1e3)
    size = parse_int(parts[2][3:], "--batching max", low=1, high=MAX_BATCH,
                     forms=f"a batch limit from 1 to {MAX_BATCH}")
    return Batching(window, size)
