"""The accuracy-constrained per-layer auto-tuner (Algorithms 1 and 2, Section III.3.B).

Two passes of two phases each. On the small test set: (1) coarse search, halving the width of
every slot together, switching FLOAT -> FIXED -> EXP when a type runs out of widths, and binary
searching between the last passing and the first failing width; (2) fine-tuning (Algorithm 2):
raise biases while the accuracy holds (best accuracy first), drop one bit at a time (best
objective gain per accuracy lost first), try a type change, repeat. On the full set:
(3) recover accuracy if the small-set winner fails (one more bit or one lower bias, best
accuracy gain per objective cost first, until some candidate passes); (4) fine-tune again.

A configuration passes when ``accuracy >= baseline * (1 - err_margin)``, the baseline being the
all-FLOAT(32) configuration on the same subset. The answer is the passing full-set
configuration with the lowest objective seen in phases 3-4 (ties: higher accuracy).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from npuweave.errors import ConfigError
from npuweave.numbers.config import NumberConfig
from npuweave.numbers.descriptors import NetworkDescriptor, PlatformDescriptor
from npuweave.numbers.evaluation import (
    BudgetExhausted,
    Evaluate,
    Objective,
    Session,
    ShellEvaluator,
    TunerError,
    resolve_objective,
)
from npuweave.numbers.space import LADDER, Space, State

_EPS = 1e-12


@dataclass(frozen=True, slots=True)
class TuneResult:
    """Outcome of a tuning (or baseline) run; accuracies are on the full set."""

    config: NumberConfig
    accuracy: float
    baseline_accuracy: float
    threshold: float
    objective: float
    baseline_objective: float
    iterations: int
    phase_iterations: dict[str, int] = field(default_factory=dict)
    stopped_early: bool = False

    @property
    def reduction(self) -> float:
        """``baseline_objective / objective`` (e.g. 8.0 = eight times smaller)."""
        return self.baseline_objective / self.objective if self.objective else float("inf")


def tune(
    network: NetworkDescriptor,
    platform: PlatformDescriptor,
    evaluate: Evaluate | None = None,
    *,
    objective: str | Objective | None = None,
    log_path: str | os.PathLike[str] | None = None,
    progress: Callable[[dict[str, Any]], None] | None = None,
    fixed: NumberConfig | None = None,
    max_evaluations: int = 5000,
) -> TuneResult:
    """Find the configuration minimizing the objective within the accuracy margin.

    Parameters
    ----------
    evaluate : callable ``(config, subset) -> accuracy``, optional
        ``subset`` is ``"small"`` or ``"full"``. Default: run the descriptor's shell commands.
    objective : ``"default"`` (sum of bit width x size), ``"weights"``, ``"module:function"``
        or a callable ``(config, network) -> float``; default: the descriptor's ``f_obj``.
    fixed : formats added to every configuration (objects that are not tuned).
    max_evaluations : stop (returning the best so far, ``stopped_early=True``) after this many.

    Examples
    --------
    >>> from npuweave.numbers.descriptors import network_from_dict, platform_from_dict
    >>> net = network_from_dict({"platform": "hw", "layer_name": ["fc"]})
    >>> hw = platform_from_dict({"supported_formats": {"hw": ["FLOAT 32", "FIXED 2-16"]}})
    >>> acc = lambda cfg, subset: 1.0 if cfg["fc.weight"].bits >= 5 else 0.5
    >>> tune(net, hw, acc, objective="weights").config["fc.weight"].bits
    5
    """
    run = _Run(network, platform, evaluate, objective, log_path, progress, fixed,
               max_evaluations)
    try:
        return run.search()
    finally:
        run.session.flush()


class _Run:
    def __init__(self, net, platform, evaluate, objective, log_path, progress, fixed, budget):
        self.net = net
        self.space = Space(net, platform)
        self.fixed = fixed
        obj = resolve_objective(objective if objective is not None else net.f_obj)
        self.objective_of = lambda cfg: float(obj(cfg, net))
        self.has_small = evaluate is not None or bool(net.cmd_smallset)
        evaluate = evaluate or ShellEvaluator.from_network(net)
        self.session = Session(evaluate, self.objective_of, log_path, progress, budget)
        self.visited: set[State] = set()
        self.stopped = False

    # -- helpers ----------------------------------------------------------------------------
    def cfg(self, state: State) -> NumberConfig:
        return self.space.config(state, self.fixed)

    def acc(self, state: State, subset: str) -> float:
        return self.session.accuracy(self.cfg(state), self._subset(subset))

    def obj(self, state: State) -> float:
        return self.objective_of(self.cfg(state))

    def passes(self, state: State, subset: str) -> bool:
        return self.acc(state, subset) >= self.session.threshold[self._subset(subset)]

    def _subset(self, subset: str) -> str:
        return subset if self.has_small else "full"

    def passing(self, states: Iterable[State], subset: str) -> list[State]:
        """Evaluate every candidate (each counts as an iteration); keep those that pass."""
        cands = list(dict.fromkeys(s for s in states if s not in self.visited))
        return [s for s in cands if self.passes(s, subset)]

    def ratio_key(self, cur: State, subset: str) -> Callable[[State], tuple]:
        """Benefit (objective saved) per accuracy lost; a free gain ranks above any ratio."""
        a0, o0 = self.acc(cur, subset), self.obj(cur)

        def key(s: State) -> tuple:
            benefit, loss = o0 - self.obj(s), a0 - self.acc(s, subset)
            if loss <= _EPS and benefit > 0:
                return (1, benefit, self.acc(s, subset))
            return (0, benefit / max(loss, _EPS), self.acc(s, subset))

        return key

    def move_to(self, state: State) -> State:
        self.visited.add(state)
        self.current = state
        return state

    # -- the algorithm ----------------------------------------------------------------------
    def search(self) -> TuneResult:
        s = self.session
        init = self.move_to(self.space.initial())
        try:
            for subset in ("small", "full"):
                s.phase = "init"
                s.threshold[self._subset(subset)] = (self.acc(init, subset)
                                                     * (1 - self.net.err_margin))
        except BudgetExhausted:  # no baseline accuracy means no threshold: nothing to return
            raise ConfigError(
                f"max_evaluations={s.max_evaluations} does not cover the baseline evaluations "
                "(FLOAT(32) on the small and the full set); allow at least 2") from None
        cur = init
        try:
            s.phase = "1-coarse"
            cur = self.coarse(init)
            s.phase = "2-finetune"
            cur = self.finetune(cur, "small")
            self.visited.clear()
            s.phase = "3-recovery"
            cur = self.recover(cur, init)
            s.phase = "4-finetune"
            cur = self.finetune(cur, "full")
        except BudgetExhausted:
            self.stopped = True
            s.max_evaluations += 1  # one last look at where the search stood
            s.phase = "budget"
            self.acc(self.current, "full")
        return self.result(init)

    def coarse(self, init: State) -> State:
        """Phase 1: uniform halving with type switching and binary search on violation."""
        best, best_bits = init, max(f.bits for f in init)
        fams = [f for f in LADDER if self.space.family_widths(f)]
        halving = True  # the previous type ran out of widths (vs. failed): keep halving
        for fam in fams:
            ws = self.space.family_widths(fam)
            hi = best_bits
            start = hi // 2 if halving else hi - 1
            below = [w for w in ws if w <= start]
            if not below:
                continue
            trial, fail, halving = max(below), None, False
            while True:
                state = self.space.uniform(best, fam, trial)
                if self.passes(state, "small"):
                    best, best_bits, hi = self.move_to(state), trial, trial
                else:
                    fail = trial
                if fail is None:
                    lower = [w for w in ws if w <= trial // 2]
                    if not lower or max(lower) >= trial:
                        halving = True
                        break
                    trial = max(lower)
                    continue
                between = [w for w in ws if fail < w < hi]
                if not between:
                    break
                trial = min(between, key=lambda w: abs(w - (fail + hi) / 2))
        return best

    def greedy(self, cur: State, moves: Callable[[State], Iterable[State]], subset: str,
               by_accuracy: bool) -> State:
        while True:
            ok = self.passing(moves(cur), subset)
            if not ok:
                return cur
            key = (lambda s: self.acc(s, subset)) if by_accuracy else self.ratio_key(cur, subset)
            cur = self.move_to(max(ok, key=key))

    def finetune(self, cur: State, subset: str) -> State:
        """Algorithm 2: bias, then bit width, then type, until no type change passes."""
        sp = self.space
        while True:
            cur = self.greedy(cur, lambda s: sp.bias_moves(s, +1), subset, by_accuracy=True)
            cur = self.greedy(cur, lambda s: sp.width_moves(s, -1), subset, by_accuracy=False)
            ok = self.passing(sp.type_moves(cur), subset)
            if not ok:
                return cur
            cur = self.move_to(max(ok, key=self.ratio_key(cur, subset)))

    def recover(self, cur: State, init: State) -> State:
        """Phase 3: widen or lower biases until the full-set constraint holds."""
        sp = self.space
        if self.passes(cur, "full"):
            return cur
        while True:
            cands = list(dict.fromkeys([*sp.width_moves(cur, +1), *sp.bias_moves(cur, -1)]))
            if not cands:
                return init
            ok = [c for c in cands if self.passes(c, "full")]
            if ok:
                return min(ok, key=lambda c: (self.obj(c), -self.acc(c, "full")))
            a0, o0 = self.acc(cur, "full"), self.obj(cur)
            cur = max(cands, key=lambda c: ((self.acc(c, "full") - a0)
                                            / max(self.obj(c) - o0, _EPS), self.acc(c, "full")))

    def result(self, init: State) -> TuneResult:
        s = self.session
        full = self._subset("full")
        thr = s.threshold[full]
        ok = [(cfg, acc) for (cfg, sub), acc in s.memo.items() if sub == full and acc >= thr]
        if not ok:  # a non-deterministic evaluation can fail even the baseline it measured
            raise TunerError(f"no configuration reached the accuracy threshold {thr:g}, not even "
                             "the baseline; make the evaluation deterministic (fixed seed, "
                             "fixed data) or widen err_margin")
        best, acc = min(ok, key=lambda t: (self.objective_of(t[0]), -t[1]))
        phases: dict[str, int] = {}
        for row in s.rows:
            phases[row["phase"]] = phases.get(row["phase"], 0) + 1
        base = self.cfg(init)
        return TuneResult(best, acc, s.memo[(base, full)], thr, self.objective_of(best),
                          self.objective_of(base), s.iterations, phases, self.stopped)

