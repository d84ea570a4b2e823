"""The one compiled decision loop of every layer-wise policy: closed loops and open arrivals.

``run_loop`` runs a board of tenants on flat arrays (``npuweave.schedule.buffer``'s state)
until it is done: admit requests, let the policy choose (``loop_steps.choose``: first come
first served, Layerweaver in either reading, Layerweaver+ with its deadlines, AI-MT), commit
the unit (``buffer.commit_in_place``), move the tenant on. Requests come from one of two
arrival processes:

* **closed loop** (``plan``, the closed-loop fast path, the reproductions): each board tenant
  is a stream; when its request's last unit is committed it issues the next one at that
  unit's compute end while ``reissues`` says so (``plan.reissues``), and every decision is
  written to the output columns (``tenant, request, unit, fs, fe, cs, ce``);
* **open arrivals** (``npuweave.sim.lwkernel``, the Layerweaver+ serving runs): arrival times
  per request; dynamic batching per model into ``slots`` board tenants (per-model FIFO, or
  per-request grouping), the predictor's ``tell`` on idle gaps, deadline inheritance, the
  deadline accounting and the early stop on ``limit`` misses; each request's finish time and
  batch size go to ``finish`` and ``batch_of``.

numba compiles the loop when it is installed (``npuweave.schedule.jit``); without it the loop
runs as plain Python with its steps copied in (``jit.python``). Either way it performs the
float operations of the Python reference (``Board``/``Predictor`` with the policy's
``select``) in the same order, so decisions and times are identical; hypothesis tests compare
them (``tests/schedule/test_sched_kernel.py``, ``test_aimt_kernel.py``,
``tests/lwplus/test_lwplus_kernel.py``). The event engine (``npuweave.sim``) stays the
reference for everything else, and the fast paths are tested against it.

State: units of every (model, batch) are concatenated; board tenant ``t`` runs units
``seg[t] + pos[t]``, model ``t // slots`` (a closed loop has one slot per stream). The loop
keeps all its state in the arrays it is given (scalars in ``si``/``sf``), so it can stop when
an output or the in-flight list is full (``FULL``) and resume after ``drive`` has grown it.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable

import numpy as np

from npuweave.schedule import jit
from npuweave.schedule.buffer import commit_in_place, in_flight
from npuweave.schedule.jit import borrow
from npuweave.schedule.loop_steps import (
    admit,
    choose,
    finish_batch,
    inherit,
    max_mft,
    next_time,
    reissues,
    tell,
)

DONE, FULL = 0, 1
#: indices of the loop's integer (``si``) and float (``sf``) scalars
HEAD, TAIL, USED, NEXT, DECISIONS, MISSED, ESTIMATES, URGENT = range(8)
T_M, T_C, NOW, PE_BUSY = range(4)


@jit.kernel
def run_loop(pol, tab, arr, st, out):
    """Run the board until it is done (``DONE``) or an output or the in-flight list is full
    (``FULL``); the state is updated in place (module docstring). The five tuples:

    * ``pol``: policy code (``loop_steps``), ``prune``, ``inherit``, Layerweaver+'s ``est``,
      ``bound``, ``alone`` tables, AI-MT's ``low_free, min_d, box, mt``;
    * ``tab``: ``k`` models, ``slots``, ``nb_max``, ``buf``, ``bw``; per (model, batch) ``j =
      m * nb_max + b - 1``: ``seg_off``, ``mft``, ``pe_sum``, ``batch_kind``; per model
      ``n_units``; per unit ``size, comp, ftime, inh``;
    * ``arr``: ``closed``, ``requests``, ``horizon``, ``has_horizon`` (the closed loop's
      end), then open arrivals ``times`` (sorted), ``models``, ``order`` (request ids by
      model, then time), ``moff`` (each model's start in ``order``), ``rel`` (relative
      deadline per model), the batching ``window`` and the miss ``limit``;
    * ``st``: per board tenant ``compute_kind, active, pos, seg, nu`` (units in its request),
      ``req, lo, hi, arrival, own, deadline, cur_mft``; per model ``ph, pa`` (requests
      batched, arrived); the work arrays ``ev, ok, inh_now, cand, c, f``; the in-flight list
      ``fl_s, fl_c, fl_f``; ``si``, ``sf`` and ``stats`` (Layerweaver+'s [estimates, urgent]);
    * ``out``: ``record``, the decision columns ``o_int`` (tenant, request, unit) and
      ``o_float`` (fs, fe, cs, ce), ``finish`` and ``batch_of`` per request.

    Every array is the caller's and borrowed (``jit.borrow``): the inlined steps then count
    no references per decision.
    """
    code, prune, inh_on, est, bound, alone, low_free, min_d, box, mt = pol
    (k, slots, nb_max, buf, bw, seg_off, mft, pe_sum, batch_kind, n_units, size, comp, ftime,
     inh) = tab
    closed, requests, horizon, has_horizon, times, models, order, moff, rel, window, limit = arr
    (compute_kind, active, pos, seg, nu, req, lo, hi, arrival, own, deadline, cur_mft, ph, pa,
     ev, ok, inh_now, cand, c, f, fl_s, fl_c, fl_f, si, sf, stats) = st
    record, o_int, o_float, finish, batch_of = out
    (est, bound, alone, box, mt, seg_off, mft, pe_sum, batch_kind, n_units, size, comp, ftime,
     inh) = borrow((est, bound, alone, box, mt, seg_off, mft, pe_sum, batch_kind, n_units, size,
                    comp, ftime, inh))
    times, models, order, moff, rel = borrow((times, models, order, moff, rel))
    (compute_kind, active, pos, seg, nu, req, lo, hi, arrival, own, deadline, cur_mft, ph, pa,
     ev, ok, inh_now, cand, c, f, fl_s, fl_c, fl_f, stats) = borrow(
        (compute_kind, active, pos, seg, nu, req, lo, hi, arrival, own, deadline, cur_mft, ph,
         pa, ev, ok, inh_now, cand, c, f, fl_s, fl_c, fl_f, stats))
    o_int, o_float, finish, batch_of = borrow((o_int, o_float, finish, batch_of))
    work = (ev, ok, inh_now)
    plus = (prune, est, bound)
    aimt = (low_free, min_d, box, mt, cand, c, f)
    batches = (seg_off, n_units, mft, pe_sum, batch_kind)
    slot = (lo, hi, seg, pos, nu, req, own, deadline, arrival, cur_mft, compute_kind)
    head, tail, used, nxt = si[HEAD], si[TAIL], si[USED], si[NEXT]
    n, missed = si[DECISIONS], si[MISSED]
    t_m, t_c, now, pe_busy = sf[T_M], sf[T_C], sf[NOW], sf[PE_BUSY]
    cap = len(o_int[0]) if record else -1
    nq = len(times)
    nt = k * slots
    nact = 0
    for t in range(nt):
        if active[t]:
            nact += 1
    maxft = max_mft(nt, active, cur_mft)
    status = DONE
    while missed < limit:
        if not closed:
            # -- arrivals up to now, then batches into free slots (Batcher.admit) --
            while nxt < nq and times[nxt] <= now:
                pa[models[nxt]] += 1
                nxt += 1
            added, pe_busy = admit(k, slots, nb_max, now, window, times, order, moff, rel, pa,
                                   ph, active, batches, slot, pe_busy)
            if added:
                nact += added
                maxft = max_mft(nt, active, cur_mft)
            if nact == 0:  # idle: jump to the next arrival or window end (Batcher.wake)
                later = next_time(k, nxt, nq, times, order, moff, pa, ph, nb_max, window, now)
                if later == np.inf:
                    break
                now = later
                t_m, t_c, head, used = tell(now, t_m, t_c, fl_s, fl_c, head, tail, used)
                continue
        elif nact == 0:
            break
        if n == cap or (head == 0 and tail == len(fl_s)):  # no room: drive() grows it
            status = FULL
            break
        if inh_on:
            inherit(k, slots, nb_max, active, own, deadline, times, order, moff, pa, ph, rel,
                    alone)
        free = buf - used
        t = choose(code, nt, active, nact, pos, seg, arrival, deadline, compute_kind, t_m, t_c,
                   now, free, maxft, size, comp, ftime, inh, fl_s, fl_c, fl_f, head, tail, bw,
                   work, plus, aimt, stats)
        # -- Board.commit --
        i = pos[t]
        fe, ce, head, tail, used = commit_in_place(seg[t] + i, t_m, t_c, free, size, comp,
                                                   ftime, fl_s, fl_c, fl_f, head, tail, used,
                                                   bw)
        if record:
            o_int[0][n], o_int[1][n], o_int[2][n] = t, req[t], i
            o_float[0][n], o_float[1][n] = t_m, fe
            o_float[2][n], o_float[3][n] = (t_c if t_c > fe else fe), ce
        n += 1
        t_m = fe
        t_c = ce
        if i + 1 < nu[t]:
            pos[t] = i + 1
        elif closed and reissues(req[t], ce, requests, horizon, has_horizon):
            req[t], arrival[t], pos[t] = req[t] + 1, ce, 0  # issued at the compute end
        else:
            if not closed:  # the batch is dispatched: its requests finish at ce
                missed += finish_batch(t, ce, lo, hi, order, times, rel[t // slots], finish,
                                       batch_of)
                own[t] = np.inf
                deadline[t] = np.inf
            active[t] = False
            nact -= 1
            maxft = max_mft(nt, active, cur_mft)
        now = t_m
    si[HEAD], si[TAIL], si[USED], si[NEXT] = head, tail, used, nxt
    si[DECISIONS], si[MISSED] = n, missed
    sf[T_M], sf[T_C], sf[NOW], sf[PE_BUSY] = t_m, t_c, now, pe_busy
    return status


#: ``run_loop``'s state ``st``, in its order (``state`` makes it)
FIELDS = ("compute_kind", "active", "pos", "seg", "nu", "req", "lo", "hi", "arrival", "own",
          "deadline", "cur_mft", "ph", "pa", "ev", "ok", "inh_now", "cand", "c", "f", "fl_s",
          "fl_c", "fl_f", "si", "sf", "stats")
ST = {name: i for i, name in enumerate(FIELDS)}
ST_FL, ST_SI = ST["fl_s"], ST["si"]


def state(k: int, slots: int, fl_room: int) -> list:
    """A fresh ``st`` for ``run_loop`` (a list, in ``FIELDS`` order): ``k`` models x ``slots``
    board tenants, none active, deadlines ``inf``, clocks at 0, an in-flight list with room
    for ``fl_room`` units. The caller keeps it alive for the call (the loop borrows it)."""
    nt = k * slots

    def zeros(dtype: type = np.float64) -> np.ndarray:
        return np.zeros(nt, dtype)

    i8, b1 = np.int64, np.bool_
    return [zeros(b1), zeros(b1), zeros(i8), zeros(i8), zeros(i8), zeros(i8), zeros(i8),
            zeros(i8), zeros(), np.full(nt, np.inf), np.full(nt, np.inf), zeros(), np.zeros(k, i8),
            np.zeros(k, i8), np.zeros((nt, 5)), zeros(b1), zeros(), zeros(i8), zeros(),
            zeros(), *in_flight(fl_room), np.zeros(8, i8), np.zeros(4), np.zeros(2, i8)]


def flags(pol: tuple, tab: tuple, arr: tuple, out: list) -> dict[str, object]:
    """``run_loop``'s run-constant values in these arguments, by the names the loop binds
    them to (the policy code and switches, the slots, the arrival process, whether
    decisions are recorded): ``consts`` for ``jit.python``."""
    return {"code": pol[0], "prune": pol[1], "inh_on": pol[2], "slots": tab[1],
            "closed": arr[0], "has_horizon": arr[3], "record": out[0]}


def plain(pol: tuple, tab: tuple, arr: tuple, out: list) -> Callable[..., int]:
    """``run_loop`` as plain Python for a run without numba: its steps copied in and its
    flags for these arguments fixed, dead branches dropped (``jit.python``)."""
    return jit.python(f"{__name__}.run_loop", consts=flags(pol, tab, arr, out))


def runner(compiled: bool, pol: tuple, tab: tuple, arr: tuple, st: list,
           out: list) -> tuple:
    """The loop to call, and its arguments: ``run_loop`` compiled (a terminal is told the
    first time it compiles), or as plain Python (``plain``) with every array as a list and
    the decision columns as ``array.array`` columns: indexing a NumPy array from Python (a
    scalar object per read) costs more than the loop's own work. Returns ``run, pol, tab,
    arr, st, out`` (``st`` and ``out`` lists, for ``drive``)."""
    if compiled:
        jit.announce(f"{__name__}.run_loop", "the layer-wise decision loop", 25)
        return run_loop, pol, tab, arr, st, out
    pol, tab, arr = as_lists(pol), as_lists(tab), as_lists(arr)
    out = [out[0], *([array("q" if c.dtype == np.int64 else "d", c.tobytes()) for c in cols]
                     for cols in out[1:3]), *(a.tolist() for a in out[3:])]
    return plain(pol, tab, arr, out), pol, tab, arr, list(as_lists(st)), out


def as_lists(arrays: tuple | list) -> tuple:
    """``arrays`` with every NumPy array as a (nested) list."""
    return tuple(a.tolist() if isinstance(a, np.ndarray) else a for a in arrays)


def drive(run: Callable[..., int], pol: tuple, tab: tuple, arr: tuple, st: list,
          out: list) -> int:
    """Call ``run`` (``run_loop``, compiled or as plain Python) until the board is done,
    growing the decision columns or the in-flight list whenever it stops on them; returns
    the number of decisions. ``st`` and ``out`` are lists (the grown arrays replace theirs)."""
    while run(pol, tab, arr, tuple(st), tuple(out)) == FULL:
        si = st[ST_SI]
        if out[0] and si[DECISIONS] == len(out[1][0]):
            out[1], out[2] = _wider(out[1]), _wider(out[2])
        if si[HEAD] == 0 and si[TAIL] == len(st[ST_FL]):
            st[ST_FL:ST_FL + 3] = [_wider(a) for a in st[ST_FL:ST_FL + 3]]
    return int(st[ST_SI][DECISIONS])


def _wider(a):
    """``a`` (an array, a list or ``array.array``, or a list of those: columns) with every
    column twice as long (the new entries uninitialised in arrays, zero otherwise)."""
    if isinstance(a, np.ndarray):
        grown = np.empty((*a.shape[:-1], 2 * a.shape[-1] + 16), a.dtype)
        grown[..., :a.shape[-1]] = a
        return grown
    if isinstance(a, array):
        return a + array(a.typecode, bytes(a.itemsize * (len(a) + 16)))
    if isinstance(a[0], (list, array)):
        return [_wider(col) for col in a]
    return a + [a[0] * 0] * (len(a) + 16)
