"""The auto-tuner (Algorithms 1-2), its log and error handling, and the baselines."""

import csv
import sys
import textwrap

import pytest

from npuweave.errors import ConfigError, NpuweaveError
from npuweave.numbers import FIXED, FLOAT32, Family
from npuweave.numbers.baselines import ristretto, ristretto_format, stripes
from npuweave.numbers.descriptors import network_from_dict, platform_from_dict
from npuweave.numbers.evaluation import ShellEvaluator, TunerError, storage_bits
from npuweave.numbers.space import profiled_bias
from npuweave.numbers.tuner import tune

FPGA = platform_from_dict({"supported_formats": {"FPGA": ["FLOAT 32", "FLOAT 16", "FIXED 2-32",
                                                          "EXP 2-9"]}})


def lenet(**extra):
    return network_from_dict({
        "platform": "FPGA", "layer_name": ["conv1", "conv2"], "layerwise_opt": "WGT-ONLY",
        "wgt_size": [500, 25000], "act_size": [784, 2880],
        "act_max_abs": [0.996094, 5.05664], "wgt_max_abs": [0.5794976, 0.16474459], **extra})


def needs_bits(minimum, exp_ok=False):
    """Accuracy 0.99 if every format is FLOAT or wide enough FIXED (EXP if allowed), else 0.5."""

    def evaluate(cfg, subset):
        for f in cfg.values():
            if f.family is Family.EXP and not exp_ok:
                return 0.5
            if f.family is not Family.FLOAT and f.bits < minimum:
                return 0.5
        return 0.99

    return evaluate


def test_profiled_biases_match_the_thesis_lenet_example():
    # Fig. III.4: act2 starts at I(-2), weight1 ends at I(1), weight2 starts at I(3)
    assert profiled_bias(Family.FIXED, 3, 5.05664) == -2
    assert profiled_bias(Family.FIXED, 3, 0.5794976) == 1
    assert profiled_bias(Family.FIXED, 3, 0.16474459) == 3
    assert profiled_bias(Family.EXP, 4, 0.5) == 8  # top power 2^-1 = 2^(7 - B)


def test_phase1_trace_matches_the_algorithm(tmp_path):
    log = tmp_path / "log.csv"
    tune(lenet(), FPGA, needs_bits(3), log_path=log)
    rows = list(csv.DictReader(log.open()))
    phase1 = [r["config"].split()[0].split("=")[1][:2] for r in rows if r["phase"] == "1-coarse"]
    # halve F32 -> F16, switch to FIXED at 8, 4, fail at 2, binary search 3, try EXP below 3
    assert phase1 == ["F1", "I8", "I4", "I2", "I3", "E2"]
    assert [int(r["iteration"]) for r in rows] == list(range(1, len(rows) + 1))


def test_result_is_cheapest_passing_config_and_respects_threshold():
    res = tune(lenet(), FPGA, needs_bits(3))
    assert res.accuracy >= res.threshold == pytest.approx(0.99 * 0.93)
    assert {f.bits for f in res.config.values()} == {3}
    assert res.objective == 3 * (500 + 25000 + 784 + 2880)
    assert res.baseline_objective == 32 * (500 + 25000 + 784 + 2880)
    assert res.reduction == pytest.approx(32 / 3)


def test_exp_wins_when_it_is_as_good():
    res = tune(lenet(), FPGA, needs_bits(2, exp_ok=True))
    assert all(f.bits == 2 for f in res.config.values())


def test_memoized_each_configuration_evaluated_once():
    calls = []

    def evaluate(cfg, subset):
        calls.append((cfg, subset))
        return needs_bits(4)(cfg, subset)

    res = tune(lenet(), FPGA, evaluate)
    assert len(calls) == len(set(calls)) == res.iterations
    assert sum(res.phase_iterations.values()) == res.iterations


def test_recovery_phase_when_the_full_set_is_stricter():
    def evaluate(cfg, subset):
        return needs_bits(3 if subset == "small" else 5)(cfg, subset)

    res = tune(lenet(), FPGA, evaluate)
    assert res.phase_iterations.get("3-recovery", 0) > 0
    assert min(f.bits for f in res.config.values()) >= 5
    assert res.accuracy >= res.threshold


def test_layerwise_none_shares_one_type_and_width_per_kind():
    def evaluate(cfg, subset):  # conv2's weights need 6 bits, conv1's only 3
        w1, w2 = cfg["conv1.weight"], cfg["conv2.weight"]
        ok = (w1.family is Family.FLOAT or w1.bits >= 3) and (w2.family is Family.FLOAT
                                                              or w2.bits >= 6)
        return 0.9 if ok else 0.1

    shared = tune(lenet(layerwise_opt="NONE", quantize="weight"), FPGA, evaluate)
    w1, w2 = shared.config["conv1.weight"], shared.config["conv2.weight"]
    assert (w1.family, w1.bits) == (w2.family, w2.bits) and w1.bits == 6
    free = tune(lenet(layerwise_opt="BOTH", quantize="weight"), FPGA, evaluate)
    assert (free.config["conv1.weight"].bits, free.config["conv2.weight"].bits) == (3, 6)
    assert "conv1.input" not in free.config


def test_sub_layers_share_the_layer_format():
    net = lenet(sub_layer_name=[[], ["conv2a", "conv2b"]])
    res = tune(net, FPGA, needs_bits(4))
    assert res.config["conv2a.weight"] == res.config["conv2b.weight"] == res.config["conv2.weight"]


def test_user_objective_callable():
    res = tune(lenet(), FPGA, needs_bits(3), objective=lambda cfg, net: -storage_bits(cfg, net))
    assert res.config["conv1.weight"] == FLOAT32  # maximizing bits keeps FLOAT(32)


@pytest.mark.parametrize(("evaluate", "words"), [
    (lambda cfg, subset: 1 / 0 if cfg["conv1.weight"].bits < 16 else 0.9, "ZeroDivisionError"),
    (lambda cfg, subset: "high" if cfg["conv1.weight"].bits < 16 else 0.9, "not a finite number"),
    (lambda cfg, subset: float("nan") if cfg["conv1.weight"].bits < 16 else 0.9, "'nan'"),
])
def test_bad_evaluate_stops_with_message_and_keeps_log(tmp_path, evaluate, words):
    log = tmp_path / "log.csv"
    with pytest.raises(TunerError) as info:
        tune(lenet(), FPGA, evaluate, log_path=log)
    msg = str(info.value)
    assert words in msg or words.strip("'") in msg
    assert "configuration #" in msg and str(log) in msg
    rows = list(csv.DictReader(log.open()))
    assert len(rows) == 3 and rows[-1]["config"].startswith("conv1.weight=F16")


def test_budget_stops_early_with_best_so_far():
    res = tune(lenet(), FPGA, needs_bits(3), max_evaluations=6)
    assert res.stopped_early and res.iterations <= 7
    assert res.accuracy >= res.threshold


def test_budget_below_the_baseline_evaluations_is_a_config_error():
    # a callable evaluator has a small and a full set: FLOAT(32) is evaluated on both first
    with pytest.raises(ConfigError, match="max_evaluations=1"):
        tune(lenet(), FPGA, needs_bits(3), max_evaluations=1)
    assert tune(lenet(), FPGA, needs_bits(3), max_evaluations=2).stopped_early


def test_shell_evaluator_runs_the_command(tmp_path):
    script = tmp_path / "fake_caffe.py"
    script.write_text(textwrap.dedent("""\
        import os, sys
        text = open(os.environ["NUMBER_CONFIG"]).read()
        bits = [int(line.split()[2]) for line in text.splitlines() if line.strip()]
        print("loss 0.1"); print("Accuracy: %.3f" % (0.9 if min(bits) >= 4 else 0.2))
    """))
    cfgp = tmp_path / "cfg.txt"
    net = network_from_dict({"platform": "hw", "layer_name": ["fc"], "quantize": "weight",
                             "cmd_fullset": f"{sys.executable} {script}",
                             "cmd_smallset": f"{sys.executable} {script} --small",
                             "config_path": str(cfgp)})
    hw = platform_from_dict({"supported_formats": {"hw": ["FLOAT 32", "FIXED 3-5"]}})
    res = tune(net, hw)
    assert min(f.bits for f in res.config.values()) == 4
    bad = ShellEvaluator(f"{sys.executable} -c 'print(1)'", "false", r"Accuracy: (\S+)",
                         config_path=str(tmp_path / "bad_cfg.txt"))
    with pytest.raises(TunerError, match="matched nothing"):
        bad(res.config, "small")
    with pytest.raises(TunerError, match="exited with"):
        bad(res.config, "full")


def test_missing_fullset_command_is_a_config_error():
    with pytest.raises(NpuweaveError, match="cmd_fullset"):
        tune(lenet(), FPGA)


# -- baselines ----------------------------------------------------------------------------
def test_ristretto_integer_length_and_power_of_two_widths():
    f = ristretto_format(8, 5.05664)  # il = ceil(log2 5.06) + 1 = 4 -> fl = 4
    assert f.quantum_min == 2.0**-4 and f.min_value == -8.0 and f.twos_complement
    res = ristretto(lenet(), needs_bits(3))
    assert {f.bits for f in res.config.values()} == {4}  # 16 -> 8 -> 4 pass, 2 fails
    # baseline, 4 widths x 2 groups (conv weights, activations), then the combination
    assert res.iterations == 1 + 2 * 4 + 1


def test_ristretto_groups_conv_and_fc_separately():
    net = network_from_dict({"platform": "FPGA", "layer_name": ["conv1", "fc1"],
                             "quantize": "weight"})

    def evaluate(cfg, subset):
        return 0.9 if cfg["fc1.weight"].bits >= 8 or cfg["fc1.weight"] == FLOAT32 else 0.1

    res = ristretto(net, evaluate)
    assert (res.config["conv1.weight"].bits, res.config["fc1.weight"].bits) == (2, 8)


def test_stripes_tunes_activations_only_with_fixed16_weights():
    def evaluate(cfg, subset):
        a1, a2 = cfg.activation("conv1"), cfg.activation("conv2")
        return 0.9 if (a1 is None or a1.bits >= 5) and (a2 is None or a2.bits >= 7) else 0.1

    res = stripes(lenet(), evaluate)
    assert res.config["conv1.weight"] == FIXED(16, 1)
    assert (res.config["conv1.input"].bits, res.config["conv2.input"].bits) == (5, 7)
