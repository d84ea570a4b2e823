"""Hostile input to the front door ``simulate(SimSpec(...))`` and the arrival processes: each
bad field is refused with an ``NpuweaveError`` whose one-line message names the field, before
any simulation work (every case here would otherwise run, crash with a Python error, or
start a huge run)."""

from __future__ import annotations

import math

import pytest

from npuweave import ClosedLoop, SimSpec, simulate
from npuweave.cost import LayerCost
from npuweave.errors import NpuweaveError
from npuweave.hardware import NPU
from npuweave.sim.arrival_processes import arrival_process
from npuweave.sim.arrivals import loadgen_server, make_arrivals, poisson

NPU_ = NPU(name="toy", pe_rows=1, pe_cols=1, clock_hz=1.0, dram_bw=10.0, weight_buffer=100,
           act_buffer=1)
CNN = ("cnn", [LayerCost(compute_s=4.0, weight_bytes=10)] * 3)


def _open():
    return make_arrivals([0.0, 1.0], [0, 0], ("cnn",))


def _closed(**kw):
    return SimSpec([CNN], NPU_, ClosedLoop(requests=1), **kw)


# (case, spec builder, words the message must contain)
SPECS = [
    ("models None", lambda: SimSpec(None, NPU_), "models"),
    ("models empty", lambda: SimSpec([], NPU_), "models"),
    ("models a string", lambda: SimSpec("resnet50", NPU_), "models"),
    ("models an int", lambda: SimSpec(5, NPU_), "models"),
    ("models bad costs", lambda: SimSpec([("x", [1, 2])], NPU_), "models[0]"),
    ("models unknown name", lambda: SimSpec(["nosuchnet"], NPU_), "nosuchnet"),
    ("npu None", lambda: SimSpec([CNN], None), "npu"),
    ("npu an int", lambda: SimSpec([CNN], 3), "npu"),
    ("npu unknown preset", lambda: SimSpec([CNN], "nosuch-npu"), "nosuch-npu"),
    ("arrivals None", lambda: SimSpec([CNN], NPU_, None), "arrivals"),
    ("arrivals a string", lambda: SimSpec([CNN], NPU_, "poisson"), "arrivals"),
    ("no request arrives", lambda: SimSpec([CNN], NPU_, make_arrivals([], [], ("cnn",)), "fcfs"),
     "no request"),
    ("arrivals name other models", lambda: SimSpec([CNN, CNN], NPU_, _open(), "fcfs"), "models"),
    ("scheduler None", lambda: _closed(scheduler=None), "scheduler"),
    ("scheduler unknown", lambda: _closed(scheduler="nosuch"), "nosuch"),
    ("scheduler_opts a list", lambda: _closed(scheduler_opts=[1]), "scheduler_opts"),
    ("scheduler_opts unknown key", lambda: _closed(scheduler_opts={"bogus": 1}), "bogus"),
    ("path unknown", lambda: _closed(path="turbo"), "path"),
    ("path fast, open loop, task-level", lambda: SimSpec([CNN], NPU_, _open(), "hpf-p",
                                                        path="fast"), "engine"),
    ("path fast, closed loop, task-level", lambda: _closed(scheduler="p-prema", path="fast"),
     "fast"),
    ("batch 0", lambda: _closed(batch=0), "batch"),
    ("batch -1", lambda: _closed(batch=-1), "batch"),
    ("batch a string", lambda: _closed(batch="4"), "batch"),
    ("batch huge", lambda: _closed(batch=10**12), "batch"),
    ("batch per model, wrong length", lambda: _closed(batch=[1, 2]), "batch"),
    ("batch with open arrivals", lambda: SimSpec([CNN], NPU_, _open(), "fcfs", batch=4),
     "batching"),
    ("batching a string", lambda: SimSpec([CNN], NPU_, _open(), "fcfs",
                                          batching="window:1ms:max4"), "batching"),
    ("batching in a closed loop", lambda: _closed(batching="window:1ms:max4"), "batching"),
    ("cost model unknown", lambda: _closed(cost_model="nosuch"), "cost model"),
    ("seed a string", lambda: _closed(seed="x"), "seed"),
    ("seed negative", lambda: SimSpec([CNN], NPU_, _open(), "fcfs", seed=-1), "seed"),
    ("max_events 0", lambda: _closed(max_events=0), "max_events"),
    ("max_events negative", lambda: SimSpec([CNN], NPU_, _open(), "fcfs", max_events=-5),
     "max_events"),
    ("traffic a string", lambda: SimSpec([CNN], NPU_, _open(), "fcfs", traffic="no"),
     "traffic"),
    ("records in a closed loop", lambda: _closed(records=True), "records"),
    ("progress not callable", lambda: SimSpec([CNN], NPU_, _open(), "fcfs", progress=5),
     "progress"),
    ("closed loop, 0 requests", lambda: SimSpec([CNN], NPU_, ClosedLoop(requests=0)),
     "requests"),
    ("closed loop, requests a string", lambda: SimSpec([CNN], NPU_, ClosedLoop(requests="x")),
     "requests"),
    ("closed loop, huge requests", lambda: SimSpec([CNN], NPU_, ClosedLoop(requests=10**15)),
     "requests"),
    ("closed loop, NaN window", lambda: SimSpec([CNN], NPU_, ClosedLoop(window_s=math.nan)),
     "window_s"),
    ("closed loop, negative window", lambda: SimSpec([CNN], NPU_, ClosedLoop(window_s=-1.0)),
     "window_s"),
]


@pytest.mark.parametrize("case, build, words", SPECS, ids=[c for c, _, _ in SPECS])
def test_simulate_refuses_bad_specs(case, build, words):
    with pytest.raises(NpuweaveError) as exc:
        simulate(build())
    msg = str(exc.value)
    assert "\n" not in msg and words in msg, (case, msg)


ARRIVALS = [
    ("negative rate", lambda: poisson(["a"], [-1.0], 1.0, 0), "qps"),
    ("NaN rate", lambda: poisson(["a"], [math.nan], 1.0, 0), "qps"),
    ("infinite rate", lambda: poisson(["a"], [math.inf], 1.0, 0), "qps"),
    ("zero rate", lambda: poisson(["a"], [0.0], 1.0, 0), "qps"),
    ("huge rate", lambda: poisson(["a"], [1e15], 1.0, 0), "qps x duration"),
    ("rate a word", lambda: poisson(["a"], ["fast"], 1.0, 0), "qps"),
    ("rate a bare number", lambda: poisson(["a"], 5.0, 1.0, 0), "qps"),
    ("one rate for two models", lambda: poisson(["a", "b"], [1.0], 1.0, 0), "qps"),
    ("no models", lambda: poisson([], [], 1.0, 0), "models"),
    ("negative duration", lambda: poisson(["a"], [1.0], -1.0, 0), "duration"),
    ("NaN duration", lambda: poisson(["a"], [1.0], math.nan, 0), "duration"),
    ("loadgen negative rate", lambda: loadgen_server(["a"], [-3.0], 1.0, 0), "qps"),
    ("loadgen huge rate", lambda: loadgen_server(["a"], [1e15], 1.0, 0), "qps x duration"),
    ("loadgen no models", lambda: loadgen_server([], [], 1.0, 0), "models"),
    ("unsorted times", lambda: make_arrivals([1.0, 0.0], [0, 0], ("a",)), "sorted"),
    ("NaN time", lambda: make_arrivals([math.nan], [0], ("a",)), "finite"),
    ("model index out of range", lambda: make_arrivals([0.0], [3], ("a",)), "model"),
    ("unknown process", lambda: arrival_process("poison"), "poisson"),
    ("process None", lambda: arrival_process(None), "arrival process"),
]


@pytest.mark.parametrize("case, call, words", ARRIVALS, ids=[c for c, _, _ in ARRIVALS])
def test_arrival_processes_refuse_bad_input(case, call, words):
    with pytest.raises(NpuweaveError) as exc:
        call()
    msg = str(exc.value)
    assert "\n" not in msg and words in msg, (case, msg)
