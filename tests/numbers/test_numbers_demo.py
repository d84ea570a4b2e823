"""The digits demo end to end (needs scikit-learn): constraint held, formats reported."""

import pytest

pytest.importorskip("sklearn")

from npuweave.numbers.demo import layer_formats, param_reduction, run_demo  # noqa: E402


def test_digits_demo_one_margin(tmp_path):
    rows = run_demo((0.07,), seed=0, out_dir=tmp_path)
    by = {r.method: r for r in rows}
    lib, ris = by["libnumber"].result, by["ristretto"].result
    for res in (lib, ris):
        assert res.accuracy >= res.threshold == pytest.approx(res.baseline_accuracy * 0.93)
        assert res.baseline_accuracy > 0.9  # the MLP really learned the digits
    assert by["libnumber"].param_reduction > 1 and by["ristretto"].param_reduction >= 2
    assert lib.objective <= ris.objective  # libnumber's space includes Ristretto's widths
    assert "/" in by["libnumber"].formats
    assert (tmp_path / "digits_libnumber_0.07.csv").exists()


def test_param_reduction_by_hand():
    from npuweave.numbers import FIXED, NumberConfig
    from npuweave.numbers.descriptors import network_from_dict

    net = network_from_dict({"platform": "x", "layer_name": ["a", "b"], "wgt_size": [100, 300]})
    cfg = NumberConfig({"a.weight": FIXED(4), "b.weight": FIXED(2)})
    assert param_reduction(cfg, net) == pytest.approx(32 * 400 / (4 * 100 + 2 * 300))
    assert layer_formats(cfg, net) == "F32 / I4-I2"
