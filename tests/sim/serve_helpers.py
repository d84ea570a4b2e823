"""Small builders for serving-simulator tests: toy tenants, scripted policies, event logs."""

from __future__ import annotations

import math

from npuweave.schedule import make_tenant
from npuweave.schedule.protocol import IDLE, Idle, Mechanism, Preempt, Run, TaskBase
from npuweave.sim.serve import Simulator
from npuweave.sim.units import Footprint

BUF, BW = 100, 10.0  # bytes, bytes/s: 10 B take 1 s


def toy(label, comps, sizes):
    return make_tenant(label, comps, sizes, BUF)


def simulate(tenants, policy, arrivals, feet=None, **kw):
    rows = [(t, k, p, d) for t, k, p, d in arrivals]
    sim = Simulator(tenants, BUF, BW, policy, arrivals=rows, footprints=feet, log=True, **kw)
    sim.run()
    return sim


def pe_log(sim):
    """``(tenant label, request id, unit index, start, end)`` per computation, in order."""
    return [(sim.tenants[u.tenant].label, r, u.index, s, e) for u, r, s, e in sim.engine.pe_log]


def dram_log(sim):
    """``(kind, request id, unit index, start, end, bytes)`` per transfer part, in order."""
    return [(u.kind.name, r, u.index, s, e, b) for u, r, s, e, b in sim.engine.dram_log]


class Script(TaskBase):
    """FCFS that preempts request 0 with ``mechanism`` for request 1 when 1 is queued.

    ``idle_until``: answer ``Idle(idle_until)`` before that time. Every call is logged as
    ``(now, decision)``.
    """

    name = "script"

    def __init__(self, mechanism=None, idle_until=0.0, restart=True):
        self.mechanism, self.idle_until, self.restart = mechanism, idle_until, restart
        self.log = []
        self.fired = False

    def decide(self, now, view):
        d = self._decide(now, view)
        self.log.append((now, d))
        return d

    def _decide(self, now, view):
        if now < self.idle_until:
            return Idle(self.idle_until)
        queued = {r.id for r in view.queued}
        if (self.mechanism is not None and not self.fired and view.running
                and view.running[0].id == 0 and 1 in queued):
            self.fired = True
            return Preempt(0, self.mechanism, then=1, restart=self.restart)
        if not view.running and view.queued:
            return Run(min(view.queued, key=lambda r: (r.arrival_s, r.id)).id)
        return IDLE


__all__ = ["BUF", "BW", "Footprint", "Mechanism", "Script", "dram_log", "math", "pe_log",
           "simulate", "toy"]
