"""A small re-implementation of Dysta's per-layer decision loop, for tests.

Written from reading SamsungLabs/Sparse-Multi-DNN-Scheduling (``dysta_scheduler/scheduler.py``:
``Scheduler.update_reqst``/``exe``, ``FCFS_Scheduler``, ``SJF_Scheduler``, ``PREMA_Scheduler``)
with the estimates equal to the given layer times. Before every layer Dysta pushes the
requests that arrived strictly before its clock and picks one:

* FCFS: the earliest arrival; SJF: the shortest remaining estimate (ties: earliest pushed);
* PREMA: a task seen for the first time gets its priority as token and is left out of the
  maximum; every other task gains ``priority * (clock - its last layer end, or arrival) /
  isolated`` (re-counted at every decision); threshold = the maximum rounded down to 9/3/1;
  candidates have ``token >= threshold``; the shortest remaining estimate among them runs.

When no task is left, Dysta pushes the next request alone and sets its clock to that
request's arrival, which runs the clock backwards when the request arrived during the last
layer (``sane=False`` keeps that; ``sane=True`` keeps the clock and pushes every request that
arrived before it).
"""

from __future__ import annotations


def dysta_run(rows, policy, sane=True):
    """``(finish by id, segments [id, start, end], clock ran backwards)``."""
    tasks, done, segs = [], {}, []
    t, i, n, backwards = 0.0, 0, len(rows), False
    while len(done) < n:
        if i < n and not tasks:
            backwards |= rows[i]["arrival_s"] < t
            t = max(t, rows[i]["arrival_s"]) if sane else rows[i]["arrival_s"]
            tasks.append(_new(rows[i]))
            i += 1
            if not sane:
                i, t = _run_layer(tasks, t, policy, segs, done, i)
                continue
        while i < n and rows[i]["arrival_s"] < t:
            tasks.append(_new(rows[i]))
            i += 1
        i, t = _run_layer(tasks, t, policy, segs, done, i)
    return done, segs, backwards


def _run_layer(tasks, t, policy, segs, done, i):
    k = _decide(tasks, t, policy)
    task = tasks[k]
    lat = task["lat"].pop(0)
    task["est"].pop(0)
    if segs and segs[-1][0] == task["id"]:
        segs[-1][2] = t + lat
    else:
        segs.append([task["id"], t, t + lat])
    t += lat
    task["last"] = t
    if not task["lat"]:
        done[task["id"]] = t
        del tasks[k]
    return i, t


def _new(r):
    lat = list(r["layer_latencies_s"])
    return {"id": r["id"], "arr": r["arrival_s"], "prio": r["priority"], "lat": lat,
            "est": list(lat), "iso": sum(lat), "last": r["arrival_s"], "tok": -1.0}


def _decide(tasks, t, policy):
    if policy == "fcfs":
        return min(range(len(tasks)), key=lambda k: (tasks[k]["arr"], k))
    if policy == "sjf":
        return min(range(len(tasks)), key=lambda k: (sum(tasks[k]["est"]), k))
    top = 0.0
    for tk in tasks:
        if tk["tok"] < 0:
            tk["tok"] = tk["prio"]
        else:
            tk["tok"] += tk["prio"] * (t - tk["last"]) / tk["iso"]
            top = max(top, tk["tok"])
    thr = 9 if top >= 9 else 3 if top >= 3 else 1
    cands = [k for k, tk in enumerate(tasks) if tk["tok"] >= thr]
    return min(cands, key=lambda k: (sum(tasks[k]["est"]), k))


def random_task_set(seed: int, n: int, rate: float) -> list[dict]:
    """``n`` Poisson arrivals at ``rate`` per second, 1-10 layers of 10 us - 2 ms, priorities
    1/3/9: the task sets the agreement test and ``benchmarks/dysta_agreement.py`` compare on."""
    import random

    rng = random.Random(seed)
    t, out = 0.0, []
    for i in range(n):
        t += rng.expovariate(rate)
        lat = [rng.uniform(1e-5, 2e-3) for _ in range(rng.randint(1, 10))]
        out.append({"id": i, "model": f"m_L{len(lat)}", "arrival_s": t,
                    "priority": rng.choice([1, 3, 9]), "layer_latencies_s": lat})
    return out
