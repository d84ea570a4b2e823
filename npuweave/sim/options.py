"""Parse and validate the serving options of the CLI (``--qps``, ``--deadline``, ``--arrivals``...).

Each parser takes the option's text and returns plain numbers or a small frozen record, or
raises ``ConfigError`` naming the flag, the bad value and what to give instead; the CLI calls
them all before any work starts. Times accept a unit: ``ns``, ``us``, ``ms``, ``s`` (a bare
number is seconds).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from npuweave.errors import ConfigError
from npuweave.sim.batcher import Batching

_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_TIME = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf)\s*([a-z]*)\s*$")
ARRIVAL_KINDS = ("poisson", "trace", "loadgen-server", "closed")


def parse_seconds(text: str, what: str) -> float:
    """A time with an optional unit (ns, us, ms, s; bare numbers are seconds) in seconds.

    Examples
    --------
    >>> parse_seconds("15ms", "--deadline"), parse_seconds("2", "--duration")
    (0.015, 2.0)
    """
    match = _TIME.match(str(text).lower())
    if not match or match.group(2) not in ("", *_UNITS):
        raise ConfigError(f"{what}: {text!r} is not a time; write a number with an optional "
                          "unit ns, us, ms or s (e.g. 15ms)")
    value = float(match.group(1)) * _UNITS[match.group(2) or "s"]
    if math.isnan(value):
        raise ConfigError(f"{what}: {text!r} is not a number")
    return value


def _items(text: str, flag: str, n_models: int) -> list[str]:
    items = [s.strip() for s in str(text).split(",")]
    if any(not s for s in items):
        raise ConfigError(f"{flag}: empty entry in {text!r}; give comma-separated values")
    if len(items) != n_models:
        raise ConfigError(f"{flag}: {len(items)} values ({text!r}) for {n_models} models; "
                          "give one value per model, in --models order")
    return items


def parse_qps(text: str, n_models: int) -> tuple[float, ...]:
    """``--qps 300,80``: one finite rate > 0 per model (requests per second).

    Examples
    --------
    >>> parse_qps("300,80", 2)
    (300.0, 80.0)
    """
    out = []
    for item in _items(text, "--qps", n_models):
        try:
            q = float(item)
        except ValueError:
            raise ConfigError(f"--qps: {item!r} is not a number; give requests per second") from None
        if not (math.isfinite(q) and q > 0):
            raise ConfigError(f"--qps: {item!r}; every rate must be finite and > 0")
        out.append(q)
    return tuple(out)


def parse_deadlines(text: str, n_models: int) -> tuple[float, ...]:
    """``--deadline 15ms,130ms``: relative latency budgets in seconds (``none``/``inf``: none).

    Examples
    --------
    >>> parse_deadlines("15ms,none", 2)
    (0.015, inf)
    """
    out = []
    for item in _items(text, "--deadline", n_models):
        d = math.inf if item.lower() == "none" else parse_seconds(item, "--deadline")
        if not d > 0:
            raise ConfigError(f"--deadline: {item!r}; a deadline must be > 0 (or 'none')")
        out.append(d)
    return tuple(out)


def parse_priorities(text: str, n_models: int) -> tuple[int, ...]:
    """``--priority 1,9``: integer priorities >= 1 (larger is more important, as in PREMA).

    Examples
    --------
    >>> parse_priorities("1,9", 2)
    (1, 9)
    """
    out = []
    for item in _items(text, "--priority", n_models):
        if not re.fullmatch(r"\+?\d+", item) or int(item) < 1:
            raise ConfigError(f"--priority: {item!r}; give whole numbers >= 1")
        out.append(int(item))
    return tuple(out)


def parse_duration(text: str) -> float:
    """``--duration 2s``: a finite simulated duration > 0 in seconds.

    Examples
    --------
    >>> parse_duration("500ms")
    0.5
    """
    d = parse_seconds(text, "--duration")
    if not (math.isfinite(d) and d > 0):
        raise ConfigError(f"--duration: {text!r}; give a finite duration > 0 (e.g. 2s)")
    return d


@dataclass(frozen=True, slots=True)
class ArrivalSpec:
    """Which arrival process to run: ``kind`` in ``ARRIVAL_KINDS``; ``path`` for traces."""

    kind: str
    path: str | None = None


def parse_arrivals(text: str) -> ArrivalSpec:
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
        raise ConfigError(f"--arrivals: {text!r}; choose one of: poisson, trace:FILE, "
                          "loadgen-server, closed")
    return ArrivalSpec(kind)


def parse_batching(text: str) -> Batching | None:
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
    if len(parts) != 3 or parts[0] != "window" or not re.fullmatch(r"max\d+", parts[2]):
        raise ConfigError(f"--batching: {text!r}; write 'none' or 'window:<time>:max<N>' "
                          "(e.g. window:2ms:max16)")
    window = parse_seconds(parts[1], "--batching window")
    size = int(parts[2][3:])
    if not (math.isfinite(window) and window >= 0):
        raise ConfigError(f"--batching: window {parts[1]!r} must be finite and >= 0")
    from npuweave.sim.batcher import MAX_BATCH

    if not 1 <= size <= MAX_BATCH:
        raise ConfigError(f"--batching: max{size}; the batch limit must be from 1 to "
                          f"{MAX_BATCH}")
    return Batching(window, size)


def build_arrivals(spec: str, models: list[str], qps: str | None, duration: str, seed: int,
                   deadline: str | None = None, priority: str | None = None) -> Any:
    """The ``Arrivals`` of ``--arrivals SPEC`` with ``--qps``/``--duration``/``--deadline``/
    ``--priority`` (texts as typed): Poisson, LoadGen's Server schedule, or a trace file.

    Examples
    --------
    >>> a = build_arrivals("poisson", ["resnet50"], "100", "50ms", seed=0)
    >>> a.models
    ('resnet50',)
    """
    from npuweave.sim import arrivals as arr

    kind = parse_arrivals(spec)
    n = len(models)
    dl = parse_deadlines(deadline, n) if deadline else None
    pr = parse_priorities(priority, n) if priority else None
    if kind.kind == "trace":
        if qps is not None:
            raise ConfigError("--qps does not apply to --arrivals trace:FILE (the file gives "
                              "the times); leave it out")
        from npuweave.sim.traces import from_trace

        return from_trace(kind.path, models)  # type: ignore[arg-type]
    if kind.kind == "closed":
        raise ConfigError("--arrivals closed: closed loops are 'npuweave schedule' (same "
                          "engine); use poisson, loadgen-server or trace:FILE here")
    if qps is None:
        raise ConfigError(f"--arrivals {spec} needs --qps, one rate per model (e.g. "
                          f"--qps {','.join(['100'] * n)})")
    gen = arr.poisson if kind.kind == "poisson" else arr.loadgen_server
    return gen(models, parse_qps(qps, n), parse_duration(duration), seed, priority=pr,
               deadline_s=dl)

