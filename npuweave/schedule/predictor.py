"""``Predictor``: the ``Board``'s lookahead, told the current time.

The ``Board`` predicts fetch and compute times from its own state ``(t_m, t_c, in-flight)``
and never sees the clock: in a closed loop work is always waiting, so the DMA engine never
idles and the prediction never falls behind. In an open loop the NPU idles between requests;
a prediction made then from the stale state would start a fetch before the request arrived.
``tell(now)`` moves the state to ``now`` first: the DMA cannot start before ``now``, the PE
cannot compute before ``now``, and every computation that ended by ``now`` has freed its
weights. The Board's arithmetic (``fetch_end``, ``fetch_window``, ``commit``) is unchanged, so
when nothing arrives between a prediction and its execution the engine's times equal it
exactly (``tests/sim/test_serve_predict.py``).

Examples
--------
>>> from npuweave.schedule.base import Tenant
>>> p = Predictor([Tenant("a", ("x",), (2.0,), (10,))], buffer_bytes=10, dram_bw=10.0)
>>> p.tell(5.0)
>>> p.issue(0, 0, 5.0)
>>> p.commit(0)          # fetch 5 -> 6 s, compute 6 -> 8 s: never before now
(0, 0, 5.0, 6.0, 6.0, 8.0)
"""

from __future__ import annotations

from npuweave.schedule.board import Board


class Predictor(Board):
    """A ``Board`` whose state can be advanced to the simulator's clock."""

    __slots__ = ()

    def tell(self, now: float) -> None:
        """Advance the predicted state to ``now`` (no-op when it is already later)."""
        if self.t_m < now:
            self.t_m = now
        if self.t_c < now:
            self.t_c = now
        self.free_until(now)
