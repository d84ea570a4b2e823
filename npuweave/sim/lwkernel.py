"""``serve_layerwise`` as one compiled loop: the capacity searches' fast path.

``npuweave.sim.lwserve.serve_layerwise`` spends 30-40 us of Python per decision (the
``Predictor``, the policy, the batching bookkeeping). ``serve_compiled`` runs the same loop
(admission and dynamic batching per model, the predictor's ``tell`` and ``commit``, the
policy's choice, the deadline accounting, the early stop) in one numba function on flat
arrays. It supports the policies the Layerweaver+ experiments use:

* ``Sequential`` (and ``Layerweaver`` whose failsafe is on after ``start``): first come first
  served, as ``sequential.fcfs_tenant``;
* ``Layerweaver`` in the ``printed`` or ``npuweave`` reading (``Layerweaver.evaluate`` and
  ``_pick`` with the starvation filter);
* ``LayerweaverPlus`` (``fast=True``, no audit), either estimate, with or without pruning
  (``LayerweaverPlus._choose_fast``), either grouping (per-model FIFO, or per-request with
  ``max_inflight`` batches of one model in service, each a candidate) and with or without
  deadline inheritance (``inherit``: a batch in service takes ``Batcher.due`` of its model's
  queue when that is earlier than its own deadline);
* ``AIMT`` on its merged sub-layer blocks (``plan.policy_tenants``, as ``serve_layerwise``),
  its thresholds and its generator (``aimt_kernel``), the generator and threshold box left
  as its ``select`` would leave them (``closed.settle``).

It performs the same float operations in the same order as the Python path (no fastmath),
so the finish times, miss counts, decision and Mode 2 counts are identical; a hypothesis test
(``tests/lwplus/test_lwplus_kernel.py``) compares the two on random instances. The standalone
estimates depend on the model, batch size and position only, so both are tables built once
per model (the ``precise`` table replays every suffix with the ``Board``'s arithmetic, in the
kernel): an estimate is one lookup in either mode. Other policies (or ``audit=True``, or a
model without units) get ``None``: the caller runs the Python loop.

The loop itself is the one compiled decision loop, ``npuweave.schedule.loop.run_loop``, with
open arrivals; this module builds its flat tables and drives it.

Without numba the functions are plain Python (correct, slower than the reference); see
``npuweave.schedule.kernel`` for the lazy compilation scheme, which this module shares.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from npuweave.schedule import closed, jit, loop
from npuweave.schedule.base import Tenant
from npuweave.schedule.buffer import room
from npuweave.schedule.layerweaver_plus import LayerweaverPlus
from npuweave.schedule.loop_steps import (
    LW_NPUWEAVE,
    LW_PLUS,
    LW_PLUS_PRINTED,
    LW_PRINTED,
    SEQ,
)
from npuweave.schedule.predictor import Predictor
from npuweave.schedule.protocol import LayerBase
from npuweave.schedule.standalone import StandaloneMode, approx_suffix, replay_table
from npuweave.sim.batcher import inflight_slots
from npuweave.sim.lwserve import Batching, Served, prepared, serve_layerwise

__all__ = ["LW_NPUWEAVE", "LW_PLUS", "LW_PLUS_PRINTED", "LW_PRINTED", "SEQ", "available", "policy_code",
           "refusal", "serve_auto", "serve_compiled"]


def refusal(policy: LayerBase) -> str | None:
    """Why the compiled loop cannot serve ``policy`` (after its ``start``), or None."""
    if policy_code(policy) is not None:
        return None
    name = getattr(policy, "name", type(policy).__name__)
    if isinstance(policy, LayerweaverPlus):
        why = [w for w, bad in (("audit", policy.audit), ("fast=False", not policy.fast))
               if bad]
        return f"{name} with {', '.join(why)} is not in the compiled loop"
    return f"policy {name} is not in the compiled loop"


def policy_code(policy: LayerBase) -> int | None:
    """The loop's code for serving ``policy`` (after its ``start``), or ``None``: the
    policy's own (``closed.policy_code``)."""
    return closed.policy_code(policy)


_TABLES: dict[tuple[int, int, float], tuple[object, dict[str, np.ndarray]]] = {}


def _model_tables(per: Sequence[Tenant], buf: int, bw: float) -> dict[str, np.ndarray]:
    """Flat per-batch arrays of one model (segments of ``n + 1`` entries, batch 1 first),
    kept while the same cost sequence object is passed (``model_costs`` caches it)."""
    key = (id(per), buf, bw)
    hit = _TABLES.get(key)
    if hit is not None and hit[0] is per:
        return hit[1]
    if len(_TABLES) > 64:
        _TABLES.clear()
    n = len(per[0].units)
    rows: dict[str, list[float]] = {k: [] for k in ("comp", "ftime", "inh", "approx", "bound")}
    sizes: list[int] = []
    mft, pe = [], []
    for t in per:
        comp, size = list(t.compute_s), list(t.weight_bytes)
        ftime = [s / bw for s in size]
        rows["comp"] += [*comp, 0.0]
        rows["ftime"] += [*ftime, 0.0]
        rows["inh"] += [*(c - (buf - s) / bw for c, s in zip(comp, size)), 0.0]
        rows["approx"] += approx_suffix(comp, ftime)
        rows["bound"] += approx_suffix([c + b / bw for c, b in zip(comp, size)], [0.0] * n)
        sizes += [*size, 0]
        mft.append(max(ftime, default=0.0))
        pe.append(sum(comp))
    out = {k: np.array(v, np.float64) for k, v in rows.items()}
    out["size"] = np.array(sizes, np.int64)
    out["mft"], out["pe"] = np.array(mft, np.float64), np.array(pe, np.float64)
    precise = np.zeros(len(sizes), np.float64)
    for j in range(len(per)):
        replay_table(out["size"], out["comp"], out["ftime"], j * (n + 1), n, buf, bw, precise)
    out["precise"] = precise
    _TABLES[key] = (per, out)
    return out


def _batch_kinds(costs: Sequence[Sequence[Tenant]], nb: int, bw: float) -> np.ndarray:
    """Whether model ``m`` at batch ``b`` is compute-bound, at ``m * nb + b - 1``: the
    ``Board``'s rule on that batch's own costs (as ``lwserve._State`` sets ``Board.kind``)."""
    return np.array([per[b].total_compute_s >= per[b].total_weight_bytes / bw
                     for per in costs for b in range(nb)], np.bool_)


def serve_compiled(costs: Sequence[Sequence[Tenant]], buffer_bytes: int, dram_bw: float,
                   time_s: np.ndarray, model: np.ndarray, deadline_s: Sequence[float],
                   policy: LayerBase, batching: Batching = Batching(),
                   stop_missed: int | None = None, plain: bool = False) -> Served | None:
    """``serve_layerwise`` in the one compiled loop; ``None`` when the policy is not in it.

    Same arguments and result as ``serve_layerwise``, except ``policy_s``: the wall time of
    the whole loop (board, batching and policy), which bounds the policy's own time above.
    The policy's counters (``decisions``, ``urgent``; ``estimates`` for Layerweaver+) are
    updated as the Python loop would leave them. Without numba (or with ``plain``) the same
    loop runs as plain Python on lists, its steps copied in (``jit.python``).

    Examples
    --------
    >>> from npuweave.schedule.sequential import Sequential
    >>> a = Tenant("a", ("x",), (2.0,), (10,))
    >>> s = serve_compiled([[a]], 10, 10.0, np.array([0.0, 0.5]), np.array([0, 0]),
    ...                    [5.0], Sequential())
    >>> s.finish_s.tolist(), s.missed       # fetch 0-1, compute 1-3; fetch 3-4, compute 4-6
    ([3.0, 6.0], 1)
    """
    costs = prepared(costs, buffer_bytes, dram_bw, time_s, model, deadline_s, policy, batching)
    slots = inflight_slots(policy)
    board = Predictor([c[0] for c in costs for _ in range(slots)], buffer_bytes, dram_bw)
    notes = tuple(policy.start(board))  # type: ignore[attr-defined]
    code = policy_code(policy)
    if code is None or any(not per[0].units for per in costs):
        return None
    compiled = jit.compile() and not plain
    pol, tab, arr, st, out = _loop_args(costs, board, time_s, model, deadline_s, policy, code,
                                        batching, stop_missed)
    run, pol, tab, arr, st, out = loop.runner(compiled, pol, tab, arr, st, out)
    t0 = time.perf_counter()
    decisions = loop.drive(run, pol, tab, arr, st, out)
    spent = time.perf_counter() - t0
    si, stats = st[loop.ST_SI], st[loop.ST["stats"]]
    missed, estimates, urgent = si[loop.MISSED], stats[0], stats[1]
    closed.settle(policy, code, pol)
    if isinstance(policy, LayerweaverPlus):
        policy.decisions += int(decisions)
        policy.urgent += int(urgent)
        if policy.est is not None:
            policy.est.calls += int(estimates)
    finish, batch = np.asarray(out[3], np.float64), np.asarray(out[4], np.int64)
    done = not np.isnan(finish).any()
    return Served(finish, batch, int(missed), bool(done), int(decisions), int(urgent),
                  spent, float(st[loop.ST["sf"]][loop.PE_BUSY]), notes)


def _loop_args(costs: Sequence[Sequence[Tenant]], board: Predictor, time_s: np.ndarray,
               model: np.ndarray, deadline_s: Sequence[float], policy: LayerBase, code: int,
               batching: Batching, stop_missed: int | None) -> tuple:
    """``run_loop``'s ``pol, tab, arr, st, out`` for an open-arrival run (``st`` and ``out``
    as lists, for ``loop.drive``): the per-(model, batch) tables concatenated, the arrivals
    ordered by model, ``finish`` (NaN) and ``batch_of`` (0) per request."""
    k, nb = len(costs), batching.max_batch
    tabs = [_model_tables(per, board.buf, board.bw) for per in costs]
    seg_off, base = [], 0
    for per in costs:
        n_m = len(per[0].units) + 1
        seg_off += [base + j * n_m for j in range(nb)]
        base += len(per) * n_m

    def cat(name: str) -> np.ndarray:
        return np.concatenate([tab[name] for tab in tabs])

    est_name = "approx"
    if isinstance(policy, LayerweaverPlus) and policy.mode is StandaloneMode.PRECISE:
        est_name = "precise"
    times = np.ascontiguousarray(time_s, np.float64)
    models = np.ascontiguousarray(model, np.int64)
    order = np.argsort(models, kind="stable").astype(np.int64)
    moff = np.zeros(k, np.int64)
    moff[1:] = np.cumsum(np.bincount(models, minlength=k))[:-1]
    limit = np.iinfo(np.int64).max if stop_missed is None else int(stop_missed)
    offsets = np.array(seg_off, np.int64)
    units = np.array([len(c[0].units) for c in costs], np.int64)
    sizes = cat("size")
    pol = closed.policy_tables(policy, code, cat(est_name), cat("bound"), cat("approx")[offsets])
    tab = (k, inflight_slots(policy), nb, board.buf, board.bw, offsets, cat("mft"), cat("pe"),
           _batch_kinds(costs, nb, board.bw), units, sizes, cat("comp"), cat("ftime"),
           cat("inh"))
    arr = (False, -1, 0.0, False, times, models, order, moff,
           np.array([float(d) for d in deadline_s]), float(batching.window_s), limit)
    st = loop.state(k, tab[1], room(board.buf, sizes, len(times) * int(units.max())))
    out = [False, *closed.columns(0), np.full(len(times), np.nan),
           np.zeros(len(times), np.int64)]
    return pol, tab, arr, st, out


def serve_auto(costs: Sequence[Sequence[Tenant]], buffer_bytes: int, dram_bw: float,
               time_s: np.ndarray, model: np.ndarray, deadline_s: Sequence[float],
               policy: LayerBase, batching: Batching = Batching(),
               stop_missed: int | None = None, compiled: bool = True) -> Served:
    """``serve_compiled`` where the policy is in the loop (compiled, or as plain Python
    without numba), else ``serve_layerwise`` (the same outcome, the Python policy loop); the
    result's last note says which path ran and why."""
    args = (costs, buffer_bytes, dram_bw, time_s, model, deadline_s, policy, batching,
            stop_missed)
    if not compiled:
        out = serve_layerwise(*args)
        return replace(out, notes=(*out.notes, "path: Python serving loop (the compiled loop "
                                   "was turned off)"))
    plain = not available()
    got = serve_compiled(*args, plain=plain)
    if got is not None:
        path = ("the serving loop as plain Python (numba is not installed)" if plain
                else "compiled serving loop")
        return replace(got, notes=(*got.notes, f"path: {path}"))
    why = refusal(policy) or "a model has no units"
    out = serve_layerwise(*args)
    return replace(out, notes=(*out.notes, f"path: Python serving loop ({why})"))


def available() -> bool:
    """Whether the loop can be compiled (numba installed); see ``schedule.kernel.available``."""
    return jit.available()

