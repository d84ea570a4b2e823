"""The predictor equals the prema cost model; the RNN length table and its calibration."""

import numpy as np
import pytest

from npuweave.cost import profile as cost_profile
from npuweave.cost.predictor import estimate, expected_out_len, isolated_time, task_layers
from npuweave.errors import ConfigError, UnknownNameError
from npuweave.hardware import preset
from npuweave.workload import seqlen, zoo
from npuweave.workload.lower import lower

NPU = preset("prema")


@pytest.mark.parametrize("name", ["cnn-an", "cnn-gn", "cnn-vn", "cnn-mn"])
@pytest.mark.parametrize("batch", [1, 4])
def test_cnn_predictor_is_the_prema_cost_model(name, batch):
    layers = lower(zoo.build(seqlen.task_model(name)))
    want = sum(c.time_s for c in cost_profile(layers, NPU, batch=batch, model="prema"))
    assert estimate(name, NPU, batch) == pytest.approx(want, rel=1e-12)


def test_rnn_predictor_uses_the_table_length():
    prof = seqlen.profile("rnn-mt2")
    out = prof.expected(12)
    layers = lower(zoo.build("lstm-translation", seq_len=12, out_len=out))
    want = sum(c.time_s for c in cost_profile(layers, NPU, batch=1, model="prema"))
    assert estimate("rnn-mt2", NPU, 1, 12) == pytest.approx(want, rel=1e-12)
    assert expected_out_len("rnn-mt2", 12) == out
    assert expected_out_len("cnn-an", None) is None


def test_table_is_geometric_mean_of_observed():
    prof = seqlen.profile("rnn-asr")
    seen = prof.observed(25)
    gm = float(np.exp(np.mean(np.log(seen))))
    assert prof.expected(25) == max(1, round(gm))
    # linear model: nothing to predict
    assert seqlen.profile("rnn-sa").observed(7) == (7,) * len(seqlen.profile("rnn-sa").observed(7))


def test_draws_are_profiled_and_seeded():
    prof = seqlen.profile("rnn-mt1")
    a = [prof.draw(np.random.default_rng(3)) for _ in range(5)]
    b = [prof.draw(np.random.default_rng(3)) for _ in range(5)]
    assert a == b
    rng = np.random.default_rng(1)
    for _ in range(200):
        i, o = prof.draw(rng)
        assert o in prof.observed(i)


@pytest.mark.parametrize("name", seqlen.names())
def test_calibration_puts_nominal_tasks_under_45ms(name):
    """max_in is the largest profiled input whose nominal task (out = ratio * in) takes at
    most 45 ms at batch 1 on prema (the seed's stated top of its task lengths)."""
    top = seqlen.max_input(name)
    step = 1
    at = isolated_time(name, NPU, 1, top, seqlen.nominal(name, top))
    assert at <= 45e-3
    nxt = top + step
    layers = lower(zoo.build(seqlen.task_model(name),
                             **seqlen.profile(name).zoo_params(nxt, seqlen.nominal(name, nxt))))
    assert sum(c.time_s for c in cost_profile(layers, NPU, batch=1, model="prema")) > 45e-3


def test_bad_lengths():
    with pytest.raises(ConfigError, match="not profiled"):
        task_layers("rnn-asr", 48, 2)
    with pytest.raises(ConfigError, match="CNN"):
        task_layers("cnn-an", 5)
    with pytest.raises(ConfigError, match="--in-len"):
        task_layers("rnn-sa")
    with pytest.raises(UnknownNameError):
        estimate("rnn-xx", NPU)
