"""The one registry of arrival processes: every kind the option parser accepts, closed included."""

from __future__ import annotations

import pytest

from npuweave import ClosedLoop
from npuweave.errors import ConfigError, UnknownNameError
from npuweave.fileio.flags import ARRIVAL_KINDS, ArrivalFlags, ArrivalSpec, parse_arrival_flags
from npuweave.sim.arrival_processes import ARRIVAL_PROCESSES, arrival_process, build_arrivals
from npuweave.sim.arrivals import poisson


def test_registry_names_what_the_parser_accepts():
    assert set(ARRIVAL_PROCESSES) == set(ARRIVAL_KINDS)
    assert [n for n, p in ARRIVAL_PROCESSES.items() if not p.open_loop] == ["closed"]


def test_builders():
    assert arrival_process("closed").build(window_s=2.0) == ClosedLoop(window_s=2.0)
    a = build_arrivals(parse_arrival_flags("poisson", 2, "300,80", "50ms", priority="1,9"),
                       ["resnet50", "bert-base"], 7)
    b = poisson(("resnet50", "bert-base"), (300.0, 80.0), 0.05, 7, priority=(1, 9))
    assert a.time_s.tolist() == b.time_s.tolist() and a.priority.tolist() == b.priority.tolist()
    lg = build_arrivals(parse_arrival_flags("loadgen-server", 1, "10", "500ms"), ["m"], 0)
    assert lg.time_s[:2].tolist() == [0.0, 0.089856038]  # LoadGen 6.0.x's first gap, seed 0


def test_trace_through_the_registry(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("time,model\n0ms,a\n5ms,b\n")
    a = build_arrivals(parse_arrival_flags(f"trace:{f}", 2), ["a", "b"], 0)
    assert a.time_s.tolist() == [0.0, 0.005] and a.model.tolist() == [0, 1]


def test_bad_names():
    with pytest.raises(UnknownNameError, match="poisson"):
        arrival_process("poison")
    with pytest.raises(ConfigError, match="not an open-loop process"):
        build_arrivals(ArrivalFlags(ArrivalSpec("closed"), None, None, None, None), ["a"], 0)
