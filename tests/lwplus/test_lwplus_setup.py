"""Chapter V's default setup is the thesis's (docs/REPRODUCTION.md, issue 22): under the
default cost model the models the thesis calls compute-intensive (IC, MN, RN) are
compute-bound on ``lwplus`` at batch 1, its memory-intensive ones (BB, BL, XL at MLPerf BERT's
384 tokens) memory-bound, so Layerweaver's failsafe leaves every pair of Figures V.5-V.7
interleaved."""

from __future__ import annotations

import pytest

from npuweave.experiments import lwplus_repro as rp
from npuweave.experiments.lwplus import ServeSetup, model_costs
from npuweave.hardware import get_npu
from npuweave.schedule.layerweaver import Layerweaver
from npuweave.schedule.predictor import Predictor


def _side(spec: str) -> str:
    setup = ServeSetup()
    npu = get_npu(setup.npu)
    t = model_costs(spec, setup.npu, 1, setup.cost_model)[0]
    return "compute" if t.total_compute_s >= t.total_weight_bytes / npu.dram_bw else "memory"


def test_default_setup_is_the_thesis_s() -> None:
    assert ServeSetup().cost_model == "maestro" and ServeSetup().failsafe
    assert rp.SEQ_LEN == 384
    assert rp.specs("RN", "BB") == ("resnet50", "bert-base:seq_len=384")


@pytest.mark.parametrize("abbr", ["IC", "MN", "RN"])
def test_vision_models_are_compute_intensive_at_batch_1(abbr: str) -> None:
    assert _side(rp.VISION[abbr]) == "compute"


@pytest.mark.parametrize("abbr", ["BB", "BL", "XL"])
def test_nlp_models_are_memory_intensive_at_batch_1(abbr: str) -> None:
    assert _side(rp.specs("RN", abbr)[1]) == "memory"


@pytest.mark.parametrize("v", ["IC", "MN", "RN"])
def test_failsafe_never_fires_on_the_thesis_pairs(v: str) -> None:
    setup = ServeSetup()
    npu = get_npu(setup.npu)
    for n in rp.NLP:
        costs = [model_costs(m, setup.npu, 1, setup.cost_model)[0] for m in rp.specs(v, n)]
        lw = Layerweaver(failsafe=True)
        assert lw.start(Predictor(costs, npu.weight_buffer, npu.dram_bw)) == []
        assert not lw.failsafe


def test_systolic_ws_is_the_sensitivity_where_rn_is_memory_bound() -> None:
    """The reason the former default needed the failsafe off (issue 22's numbers)."""
    npu = get_npu("lwplus")
    t = model_costs("resnet50", "lwplus", 1, "systolic-ws")[0]
    assert t.total_compute_s < t.total_weight_bytes / npu.dram_bw
