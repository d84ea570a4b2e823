"""Baseline quantizers for the comparison of Table III.4: Ristretto and a Stripes-style search.

- Ristretto: dynamic fixed point (two's complement) with one power-of-two width per group
  (conv weights, fc weights, activations), tried 16 -> 8 -> 4 -> 2 with the other groups at
  FLOAT(32); the integer length of every layer comes from its largest magnitude,
  ``il = ceil(log2 max_abs) + 1``. The groups' widths are then combined; if the combination
  misses the threshold, the group whose doubling helps most is widened until it passes.
- Stripes: activations only, weights FIXED(16). Each layer's activation width is lowered one
  bit at a time with the others at 16 bits; the per-layer minima are combined and, while the
  combination fails, the layer whose extra bit helps most gets it.

Both evaluate on the full set only and share :class:`Session` (memo, CSV log) with the tuner.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import Any

from npuweave.numbers.config import NumberConfig
from npuweave.numbers.descriptors import NetworkDescriptor
from npuweave.numbers.evaluation import Evaluate, Session, resolve_objective
from npuweave.numbers.format import FIXED, FLOAT32, Family, NumberFormat
from npuweave.numbers.space import Slot, profiled_bias
from npuweave.numbers.tuner import TuneResult

Assignment = dict[Slot, NumberFormat]


def ristretto_format(bits: int, max_abs: float | None) -> NumberFormat:
    """Ristretto's dynamic fixed point: ``bits`` wide, integer length from ``max_abs``.

    Examples
    --------
    >>> ristretto_format(8, 5.05).min_value, ristretto_format(8, 5.05).max_value
    (-8.0, 7.9375)
    """
    il = math.ceil(math.log2(max_abs)) + 1 if max_abs else 1
    return FIXED(bits, 2 - il, twos_complement=True)


def default_groups(net: NetworkDescriptor) -> dict[str, list[Slot]]:
    """Ristretto's groups: conv weights, fc (all other) weights, activations."""
    groups: dict[str, list[Slot]] = {}
    for i, name in enumerate(net.layer_name):
        if "weight" in net.quantize:
            key = "conv.weight" if name.lower().startswith("conv") else "fc.weight"
            groups.setdefault(key, []).append(Slot(i, "weight"))
        if "activation" in net.quantize:
            groups.setdefault("activation", []).append(Slot(i, "activation"))
    return groups


class _Baseline:
    def __init__(self, net, evaluate, objective, log_path, progress, name):
        self.net = net
        obj = resolve_objective(objective if objective is not None else net.f_obj)
        self.objective_of = lambda cfg: float(obj(cfg, net))
        self.session = Session(evaluate, self.objective_of, log_path, progress)
        self.session.phase = name

    def config(self, assignment: Assignment) -> NumberConfig:
        """Every slot of the quantized kinds; those not assigned stay FLOAT(32)."""
        items: dict[str, NumberFormat] = {}
        for kind in self.net.quantize:
            for i in range(len(self.net.layer_name)):
                fmt = assignment.get(Slot(i, kind), FLOAT32)
                for name in self.net.object_names(i, kind):
                    items[name] = fmt
        return NumberConfig(items)

    def acc(self, assignment: Assignment) -> float:
        return self.session.accuracy(self.config(assignment), "full")

    def ok(self, assignment: Assignment) -> bool:
        return self.acc(assignment) >= self.session.threshold["full"]

    def start(self) -> float:
        base = self.acc({})
        self.session.threshold["full"] = base * (1 - self.net.err_margin)
        return base

    def result(self, assignment: Assignment, base: float) -> TuneResult:
        cfg = self.config(assignment)
        empty = self.config({})
        s = self.session
        s.flush()
        return TuneResult(cfg, self.acc(assignment), base, s.threshold["full"],
                          self.objective_of(cfg), self.objective_of(empty), s.iterations,
                          {s.phase: s.iterations})


def ristretto(
    network: NetworkDescriptor,
    evaluate: Evaluate,
    *,
    widths: tuple[int, ...] = (16, 8, 4, 2),
    groups: Mapping[str, list[Slot]] | None = None,
    objective: Any = None,
    log_path: str | os.PathLike[str] | None = None,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> TuneResult:
    """Ristretto's dynamic fixed-point search (see the module docstring)."""
    run = _Baseline(network, evaluate, objective, log_path, progress, "ristretto")
    try:
        base = run.start()
        groups = dict(groups or default_groups(network))
        fmt = {g: (lambda bits, g=g: {s: ristretto_format(bits, network.max_abs(s.kind, s.layer))
                                       for s in groups[g]}) for g in groups}
        chosen: dict[str, int] = {}
        for g in groups:
            chosen[g] = widths[0]
            for bits in widths:
                if not run.ok(fmt[g](bits)):
                    break
                chosen[g] = bits

        def combine(choice: dict[str, int]) -> Assignment:
            out: Assignment = {}
            for g, bits in choice.items():
                out.update(fmt[g](bits))
            return out

        while not run.ok(combine(chosen)):
            wider = {g: min(chosen[g] * 2, widths[0]) for g in chosen if chosen[g] < widths[0]}
            if not wider:
                break
            g = max(wider, key=lambda g: run.acc(combine({**chosen, g: wider[g]})))
            chosen[g] = wider[g]
        return run.result(combine(chosen), base)
    finally:
        run.session.flush()


def stripes(
    network: NetworkDescriptor,
    evaluate: Evaluate,
    *,
    start_bits: int = 16,
    weight_bits: int = 16,
    objective: Any = None,
    log_path: str | os.PathLike[str] | None = None,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> TuneResult:
    """Stripes-style per-layer activation precision search with FIXED(16) weights."""
    run = _Baseline(network, evaluate, objective, log_path, progress, "stripes")
    try:
        base = run.start()
        n = len(network.layer_name)

        def fixed(kind: str, i: int, bits: int) -> NumberFormat:
            bias = profiled_bias(Family.FIXED, bits, network.max_abs(kind, i))
            return FIXED(bits, 0 if bias is None else bias)

        weights = {Slot(i, "weight"): fixed("weight", i, weight_bits) for i in range(n)}

        def assign(bits: list[int]) -> Assignment:
            acts = {Slot(i, "activation"): fixed("activation", i, b) for i, b in enumerate(bits)}
            return {**weights, **acts}

        best = [start_bits] * n
        for i in range(n):
            for bits in range(start_bits - 1, 1, -1):
                trial = [start_bits] * n
                trial[i] = bits
                if not run.ok(assign(trial)):
                    break
                best[i] = bits
        while not run.ok(assign(best)):
            options = [i for i in range(n) if best[i] < start_bits]
            if not options:
                break
            i = max(options, key=lambda i: run.acc(assign(best[:i] + [best[i] + 1] + best[i + 1:])))
            best[i] += 1
        return run.result(assign(best), base)
    finally:
        run.session.flush()
