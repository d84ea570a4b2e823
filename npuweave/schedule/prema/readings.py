"""Readings of PREMA: each place the paper is garbled or silent, as a named option.

``Reading`` holds one choice per open question; ``reading("paper")`` is our most defensible
reading of the seed, ``"dysta"`` and ``"canplane"`` the choices of two public reimplementations
(SamsungLabs Sparse-Multi-DNN-Scheduling "Dysta", canplane SCALE-Sim-PREMA), as described in
the shared reading notes. ``docs/PREMA.md`` gives the reasons for each default.

Examples
--------
>>> reading("paper").strict_threshold
False
>>> reading("canplane", period_s=0.25e-3).token_levels
(3.0, 6.0, 9.0)
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from npuweave.errors import ConfigError, unknown_name

TOKEN_UPDATES = ("period", "closed-form", "since-exec")
JOB_LENGTHS = ("remaining", "total")
DECIDE_AT = ("events", "layer")
GATES = ("pick-differs", "bucket")
SELECTS = ("alg3", "static")
CKPT_COSTS = ("analytic", "paper", "zero")
PREEMPT_AT = ("tile", "layer")
FIRST_VISITS = ("credit", "priority")
THRESHOLD_OF = ("all", "earlier")

PAPER_CKPT_S = 12e-6
"""The paper's mean CHECKPOINT latency (section IV-D), charged per preemption by ``paper``."""


@dataclass(frozen=True, slots=True)
class Reading:
    """One reading of the open places in PREMA (defaults: ``paper``).

    Attributes
    ----------
    name : preset it came from (``custom`` once overridden).
    token_levels : initial token (= priority value) of low/medium/high (Table II: 1/3/9).
    threshold_levels : values the threshold rounds down to (default: ``token_levels``).
    strict_threshold : candidates need ``token > threshold`` (printed) instead of ``>=``.
    token_update : ``period`` (credit ready-queue idle time since the last update, at every
        wake-up), ``closed-form`` (``prio * (1 + waited / est)``, recomputed), or
        ``since-exec`` (credit ``now - last execution`` at every decision: re-counts idle time).
    job_length : ``remaining`` (estimate minus executed: SRTF) or ``total`` estimate.
    decide_at : ``events`` (arrival, completion, every ``period_s``) or ``layer`` (at every
        unit boundary of the engine, and when a request arrives to an idle NPU; nothing else).
    first_visit : ``credit`` (a token counts the wait since arrival from the first decision
        that sees the request) or ``priority`` (Dysta: it starts at its priority; the wait is
        credited from the next decision on).
    threshold_of : the threshold rounds down the largest token of ``all`` candidates, or of
        those seen by an ``earlier`` decision (Dysta: a token created now is left out).
    period_s : scheduling period Gamma (Table II: 0.25 ms).
    preempt_gate : ``pick-differs`` (the running task competes with a frozen token; preempt
        when another is picked) or ``bucket`` (only a candidate whose token bucket is at
        least the running task's may preempt).
    mechanism_select : ``alg3`` (dynamic = Algorithm 3) or ``static`` (dynamic = always
        the preempting mechanism: no DRAIN).
    ckpt_cost : ``analytic`` (the engine's priced store and restore), ``paper`` (a flat
        12 us per preemption) or ``zero``.
    preempt_at : ``tile`` (GEMM-tile boundaries) or ``layer`` boundaries.
    """

    name: str = "paper"
    token_levels: tuple[float, ...] = (1.0, 3.0, 9.0)
    threshold_levels: tuple[float, ...] = ()
    strict_threshold: bool = False
    token_update: str = "period"
    job_length: str = "remaining"
    decide_at: str = "events"
    period_s: float = 0.25e-3
    preempt_gate: str = "pick-differs"
    mechanism_select: str = "alg3"
    ckpt_cost: str = "analytic"
    preempt_at: str = "tile"
    first_visit: str = "credit"
    threshold_of: str = "all"

    @property
    def levels(self) -> tuple[float, ...]:
        """The values the threshold rounds down to."""
        return self.threshold_levels or self.token_levels

    def to_dict(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


PRESETS: dict[str, Reading] = {
    "paper": Reading(),
    "dysta": Reading(name="dysta", token_update="since-exec", decide_at="layer",
                     mechanism_select="static", ckpt_cost="zero", preempt_at="layer",
                     first_visit="priority", threshold_of="earlier"),
    "canplane": Reading(name="canplane", token_levels=(3.0, 6.0, 9.0),
                        threshold_levels=(3.0, 6.0, 9.0, 12.0), token_update="closed-form",
                        period_s=100_000 / 700e6, preempt_gate="bucket", ckpt_cost="zero"),
}

_CHOICES = {"token_update": TOKEN_UPDATES, "job_length": JOB_LENGTHS, "decide_at": DECIDE_AT,
            "preempt_gate": GATES, "mechanism_select": SELECTS, "ckpt_cost": CKPT_COSTS,
            "preempt_at": PREEMPT_AT, "first_visit": FIRST_VISITS,
            "threshold_of": THRESHOLD_OF}


def reading(name: str = "paper", **overrides: object) -> Reading:
    """A preset reading, optionally with some options overridden (then named ``custom``).

    Raises ``UnknownNameError`` for an unknown preset and ``ConfigError`` for an unknown
    option or a value outside its choices.
    """
    base = PRESETS.get(name.lower()) if isinstance(name, str) else None
    if base is None:
        raise unknown_name("PREMA reading", str(name), list(PRESETS))
    known = {f.name for f in fields(Reading)} - {"name"}
    bad = sorted(k for k in overrides if k not in known)
    if bad:
        raise ConfigError(f"PREMA reading has no option {', '.join(bad)}; options: "
                          f"{', '.join(sorted(known))}")
    for key, value in overrides.items():
        if key in _CHOICES and value not in _CHOICES[key]:
            raise ConfigError(f"reading option {key}={value!r}; choose one of "
                              f"{', '.join(_CHOICES[key])}")
    changes: dict[str, Any] = {**overrides, "name": "custom"}
    out = replace(base, **changes) if overrides else base
    _validate(out)
    return out


def _validate(r: Reading) -> None:
    if not r.token_levels or len(r.token_levels) != 3 or any(t <= 0 for t in r.token_levels):
        raise ConfigError(f"token_levels must be three positive values (low, medium, high); "
                          f"got {r.token_levels}")
    if list(r.token_levels) != sorted(r.token_levels):
        raise ConfigError(f"token_levels must rise from low to high; got {r.token_levels}")
    if not r.period_s > 0 or r.period_s == float("inf"):
        raise ConfigError(f"period_s must be a finite time > 0 s; got {r.period_s}")
