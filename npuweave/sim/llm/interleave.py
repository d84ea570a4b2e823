"""Layerweaver applied to phases: a prefill iteration and a decode iteration share one NPU.

The two iterations become two tenants of the Layerweaver policy (``npuweave.schedule``), one
unit per transformer block: the unit's PE seconds and DRAM bytes are the iteration's totals
divided evenly over the blocks. The weight buffer holds two units of the larger stream (the
unit computing and the one being fetched), so DMA and PE overlap across the two streams as
Layerweaver's greedy orders them. Each stream fetches its own weights: nothing is shared, which
is the price of running them as separate batches. When interleaving would not beat running
the prefill and then the decode (both streams on the same side of the ridge: Layerweaver's
failsafe), they run one after the other. Results are cached by the two costs rounded
to 0.5 % (a relative error of at most that on the interleaved times).
"""

from __future__ import annotations

import math

from npuweave.schedule.plan import plan
from npuweave.schedule.tiling import make_tenant
from npuweave.sim.llm.costs import StepCost, StepCosts

_STEP = math.log(1.005)


def _q(x: float) -> int:
    return round(math.log(x) / _STEP) if x > 0 else -(10**9)


def interleave(costs: StepCosts, prefill: StepCost, decode: StepCost) -> tuple[float, float]:
    """``(prefill end, decode end)`` seconds after the start when both run interleaved.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> sc = StepCosts("llm-tiny", preset("tpuv5e-like"))
    >>> p, d = sc.iteration([(256, 0)], []), sc.iteration([], [64] * 8)
    >>> max(interleave(sc, p, d)) <= p.time_s + d.time_s + 1e-12
    True
    """
    key = (_q(prefill.compute_s), _q(prefill.dram_bytes), _q(decode.compute_s),
           _q(decode.dram_bytes))
    hit = costs.interleaved.get(key)
    if hit is None:
        hit = costs.interleaved[key] = _interleave(costs, prefill, decode)
    # a cached plan is for costs within 0.5 %: hold the bounds for these exact costs.
    # An iteration is never faster than its own standalone time (latency, per-layer max)
    end_p, end_d = max(hit[0], prefill.time_s), max(hit[1], decode.time_s)
    serial = prefill.time_s + decode.time_s
    if max(end_p, end_d) >= serial:  # interleaving does not pay: prefill, then decode
        return prefill.time_s, serial
    return end_p, end_d


def _interleave(costs: StepCosts, prefill: StepCost, decode: StepCost) -> tuple[float, float]:
    bw = costs.npu.dram_bw
    units = [costs.block_units(c) for c in (prefill, decode)]
    buffer = 2 * max(max(b) for _, b in units)
    tenants = [make_tenant(label, comp, nbytes, buffer)
               for label, (comp, nbytes) in zip(("prefill", "decode"), units)]
    sched = plan("layerweaver", tenants, buffer, bw, requests=1, reading="npuweave")
    ends = [0.0, 0.0]
    for (t, _, _), end in zip(sched.order, sched.compute_end_s):
        ends[t] = max(ends[t], end)
    return ends[0], ends[1]
