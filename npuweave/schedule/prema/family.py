"""What PREMA's six policies share: estimates, tokens, the preemption gate and mechanism.

Every policy of the paper's evaluation (NP-FCFS, RRB, HPF, TOKEN, SJF, PREMA) is a task-level
policy on the serving protocol (``npuweave.schedule.protocol``). A subclass names its pick
among the waiting requests (``pick``) and, when preemptive, whether that pick may take the
NPU from the running request (``wins``). This base turns the two answers into a decision:

* NPU free: ``Run(pick)``;
* non-preemptive, or the pick does not win: ``Idle`` (the running request keeps the NPU);
* preemptive and the pick wins: ``Preempt(running, mechanism)`` (``then=None``: the
  simulator asks again when the NPU is free, and the pick is re-made then), where the
  mechanism is static (``checkpoint`` or ``kill``) or dynamic (Algorithm 3: DRAIN, i.e. keep
  running, or CHECKPOINT; ``dynamic-kill`` uses KILL instead, the Fig. 15 variant).

Estimates: ``estimates_s[tenant]`` is the predictor's ``Time_estimated`` of that tenant's
request (PREMA runs give every task its own tenant); without it the view's cold isolated time
is used, i.e. an oracle. ``Time_executed`` is the isolated time of the units already computed.
``reading`` names a preset of ``npuweave.schedule.prema.readings`` and ``options`` overrides
some of its choices; ``groups`` (RRB only) gives each tenant's model type.
"""

from __future__ import annotations

from collections.abc import Sequence

from npuweave.errors import ConfigError
from npuweave.schedule.prema.mechanism import select_mechanism
from npuweave.schedule.prema.readings import Reading
from npuweave.schedule.prema.readings import reading as get_reading
from npuweave.schedule.prema.tokens import accrue
from npuweave.schedule.protocol import IDLE, Decision, Preempt, RequestView, Run, TaskBase, View
from npuweave.schedule.task import task_mechanism

MECHANISM_CHOICES = ("checkpoint", "kill", "drain", "dynamic", "dynamic-kill")
TOTAL_FRACTION = 1 / 4000
"""The wake-up period is at least this fraction of all tenants' isolated times together.
Table II's 0.25 ms quantum is meant for tasks of 0.5-45 ms; for tasks of seconds it would only
multiply wake-ups, so it scales. PREMA's 8-task workloads sum to at most ~0.45 s, so 1/4000
stays below 0.25 ms and they keep Table II's period."""
MIN_EST_S = 1e-9
"""Floor of the estimate in the token arithmetic (a task of zero work would divide by 0)."""
PAPER_PRIORITIES = (1, 3, 9)
"""Request priorities of the three levels (the requests carry the paper's 1/3/9)."""


def level_of(priority: int) -> int:
    """Level index (0 low, 1 medium, 2 high) of a request priority 1, 3 or 9."""
    if priority not in PAPER_PRIORITIES:
        raise ConfigError(f"request priority {priority} is not a PREMA level; use 1 (low), "
                          f"3 (medium) or 9 (high)")
    return PAPER_PRIORITIES.index(priority)


class PremaFamily(TaskBase):
    """Base of the PREMA-evaluation policies (see the module docstring)."""

    name = "prema-family"
    uses_tokens = False

    def __init__(self, preemptive: bool = False, mechanism: str = "checkpoint",
                 estimates_s: Sequence[float] | None = None, reading: str = "paper",
                 options: dict[str, object] | None = None,
                 groups: Sequence[int] | None = None, seed: int = 0) -> None:
        if mechanism not in MECHANISM_CHOICES:
            raise ConfigError(f"{self.name}: unknown preemption mechanism {mechanism!r}; "
                              f"choose one of: {', '.join(MECHANISM_CHOICES)}")
        self.preemptive = bool(preemptive)
        self.mechanism = mechanism
        self.reading: Reading = get_reading(reading, **(options or {}))
        self.groups = None if groups is None else tuple(int(g) for g in groups)
        self.estimates = None if estimates_s is None else tuple(float(e) for e in estimates_s)
        if self.estimates is not None and any(not e > 0 for e in self.estimates):
            raise ConfigError(f"{self.name}: estimates_s must all be > 0 s")
        if self.preemptive:
            self.name = f"p-{self.name}"
        # decide_at="layer": the simulator consults the policy at every unit boundary (and
        # when a request arrives to an idle NPU), so no periodic wake-ups
        self.at_units = self.reading.decide_at == "layer"
        period = self.reading.period_s
        self.period_s = period if self.uses_tokens and not self.at_units else None
        self.fresh: set[int] = set()  # requests whose token this decision created
        self.tokens: dict[int, float] = {}
        self.updated: dict[int, float] = {}
        self.last_exec: dict[int, float] = {}
        self.rates: dict[int, tuple[float, float]] = {}  # per request: (prio, estimate)
        self.drains = 0

    def start(self, view: View) -> list[str]:
        """Scale the wake-up period for runs of long tasks (see ``TOTAL_FRACTION``)."""
        if self.period_s is None:
            return []
        sizes = [v for v in view.isolated_s if v > 0] or [
            rest[0] for rest in view.remaining if rest and rest[0] > 0]
        floor = sum(sizes) * TOTAL_FRACTION
        if floor > self.period_s:
            self.period_s = floor
            return [f"{self.name}: wake-up period scaled to {self.period_s:.3g} s "
                    f"(1/{round(1 / TOTAL_FRACTION)} of all the tenants' work)"]
        return []

    # ---- estimates -------------------------------------------------------------------
    def est(self, view: View, r: RequestView) -> float:
        """``Time_estimated`` of the request's task."""
        if self.estimates is not None:
            if r.model >= len(self.estimates):
                raise ConfigError(f"{self.name}: estimates_s has {len(self.estimates)} "
                                  f"entries but the run has tenant {r.model}")
            return self.estimates[r.model]
        if r.model < len(view.isolated_s):
            return view.isolated_s[r.model]
        return view.remaining[r.model][0]  # the run gave no cold isolated times

    def executed(self, view: View, r: RequestView) -> float:
        """``Time_executed``: isolated seconds of the units computed so far."""
        return view.remaining[r.model][0] - view.remaining_s(r)

    def length(self, view: View, r: RequestView) -> float:
        """The job length the policy sorts by (the reading's ``job_length``)."""
        est = self.est(view, r)
        if self.reading.job_length == "total":
            return est
        return max(est - self.executed(view, r), 0.0)

    # ---- tokens (Algorithm 2) ----------------------------------------------------------
    def prio(self, r: RequestView) -> float:
        """Initial token and accrual weight: the reading's value for a paper level (1/3/9),
        otherwise the priority itself, never below the lowest level (closed loops use 0)."""
        if r.priority in PAPER_PRIORITIES:
            return self.reading.token_levels[level_of(r.priority)]
        return max(float(r.priority), self.reading.token_levels[0])

    def update_tokens(self, now: float, view: View) -> None:
        """Credit every waiting request for its ready-queue time since the last update."""
        self.fresh.clear()
        tokens, updated, last_exec = self.tokens, self.updated, self.last_exec
        since = last_exec if self.reading.token_update == "since-exec" else updated
        for r in view.queued:
            rid = r.id
            if rid not in tokens and self._first_visit(view, r):
                continue
            prio, est = self.rates[rid]
            # since-exec re-counts the wait since the last execution; period / closed-form
            # credit only the time since the last update
            tokens[rid] = accrue(tokens[rid], prio, now - since[rid], est)
            updated[rid] = now
        for r in view.running:
            rid = r.id
            if rid not in tokens and self._first_visit(view, r):
                continue
            last_exec[rid] = updated[rid] = now

    def _first_visit(self, view: View, r: RequestView) -> bool:
        """A request's token is created: its priority, its clocks at its arrival. True when
        the reading leaves this decision's wait uncredited (dysta: it starts at its
        priority)."""
        rid = r.id
        self.tokens[rid] = prio = self.prio(r)
        self.rates[rid] = (prio, max(self.est(view, r), MIN_EST_S))
        self.updated[rid] = self.last_exec[rid] = r.arrival_s
        self.fresh.add(rid)
        return self.reading.first_visit == "priority"

    # ---- the decision ------------------------------------------------------------------
    def pick(self, now: float, view: View) -> RequestView | None:  # pragma: no cover
        raise NotImplementedError

    def wins(self, now: float, view: View, best: RequestView, run: RequestView) -> bool:
        return False

    def decide(self, now: float, view: View) -> Decision:
        if self.uses_tokens:
            self.update_tokens(now, view)
        if not view.queued or (view.running and not self.preemptive):
            return IDLE  # nobody could take the NPU (most periodic wake-ups): no pick
        best = self.pick(now, view)
        if best is None:
            return IDLE
        if not view.running:
            return Run(best.id)
        run = view.running[0]
        if best.id == run.id or not self.preemptive or not self.wins(now, view, best, run):
            return IDLE
        return self._preempt(view, run, best)

    def _preempt(self, view: View, run: RequestView, best: RequestView) -> Decision:
        # ``then=None``: the simulator asks again once the NPU is free, so a request that
        # arrives while the preemption is pending is not skipped by a stale ``then``.
        # at a unit boundary the preemption takes effect at once: hand the NPU to the pick
        # in the same decision (one decision per boundary, as Dysta makes)
        then = best.id if self.at_units else None
        if self.mechanism in ("checkpoint", "kill", "drain"):
            return Preempt(run.id, task_mechanism(self.mechanism, self.name), then)
        alt = "kill" if self.mechanism == "dynamic-kill" else "checkpoint"
        if self.reading.mechanism_select == "alg3":
            choice = select_mechanism(self.est(view, run), self.executed(view, run),
                                      self.est(view, best), self.executed(view, best), alt)
            if choice == "drain":
                self.drains += 1
                return IDLE
        return Preempt(run.id, task_mechanism(alt, self.name), then)
