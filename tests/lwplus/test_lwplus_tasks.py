"""``run_tasks``: every distinct capacity search runs once, rows are what each task gives
alone, and ``"ours"`` runs at the operating point its search found."""

from __future__ import annotations

from npuweave.experiments import lwplus_repro as rp
from npuweave.experiments.lwplus import ServeSetup

SETUP = ServeSetup(requests=300, seeds=(0,), baseline_windows_s=(0.0, 2e-3))
NAMES = ["baseline", "lwplus-approx"]


def _tasks():
    tasks = rp.fig5_tasks([("RN", "BB")], [(4.0, 1.0), (1.0, 4.0)], NAMES, SETUP)
    tasks += [t for t in rp.fig6_tasks(NAMES, SETUP) if t[1]["pair"] == "RN+BB"]
    return tasks + rp.fig7_tasks(NAMES, SETUP, rp.FIG7_CASES[:1])


def test_each_search_runs_once_and_rows_match_the_single_task_path(monkeypatch) -> None:
    calls: list[tuple] = []

    def search(a):  # a stand-in search: the load encodes its inputs
        calls.append(rp.search_key(a))
        return {"qps": 1000 * a["deadlines"][0] + a["ratio"][0] / sum(a["ratio"]),
                "stp": 1.0, "scheduler_seen": a["scheduler"]}

    def fixed(a, qps):
        return {"scheduler": a["scheduler"], "miss_all": 0.0, "ran_at": qps}

    monkeypatch.setattr(rp, "_search", search)
    monkeypatch.setattr(rp, "_fixed", fixed)
    tasks = _tasks()
    rows = rp.run_tasks(tasks, 1)
    # V.5: 2 ratios x 2 schedulers; V.7 at BB+RN 4:1: 9 deadline pairs x 2, one of which
    # (15 / 130 ms) is V.5's RN+BB 1:4; "ours" at RN+BB 4:1 is V.5's lwplus-approx search
    assert len(calls) == len(set(calls)) == 4 + 9 * 2 - 2
    reused = [(r["figure"], r["search_of"]) for r in rows if "search_of" in r]
    assert reused == [("V.7", "V.5 RN+BB 1:4")] * 2
    calls.clear()
    alone = [rp.run_task(t) for t in tasks]
    for r, a in zip(rows, alone):
        r.pop("search_of", None)
        assert r == a
    ours = [r for r in rows if r["figure"] == "V.6-ours"]
    # the operating point: 1000 * 0.015 + 0.8 QPS in all, split 800:200
    assert {r["ran_at"] for r in ours} == {(15.8 * 0.8, 15.8 * 0.2)}
    assert {r["load_ratio"] for r in ours} == {15.8 / 1000}
