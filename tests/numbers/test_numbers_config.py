"""Number configuration files and platform/network descriptors."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.errors import ConfigError
from npuweave.numbers import (
    EXP,
    FIXED,
    FLOAT,
    NumberConfig,
    NumberFormat,
    parse_config,
    parse_format,
    write_config,
)
from npuweave.numbers.descriptors import (
    LayerwiseOpt,
    load_network,
    load_platform,
    network_from_dict,
    platform_from_dict,
)

THESIS_FILE = """\
# Fig. III.2(b)
conv1.weight  EXP 8
conv1.input   EXP 6
fc1.weight    FIXED 15 -3
fc1.input     FLOAT 32
"""


def test_thesis_example_dictionary():
    cfg = parse_config(THESIS_FILE, register=False)
    assert cfg["conv1.weight"].canonical == (1, 7, 0, 63)
    assert cfg["conv1.input"].canonical == (1, 5, 0, 15)
    assert cfg["fc1.weight"].canonical == (1, 0, 14, -3)
    assert cfg["fc1.input"].canonical == (1, 8, 23, 127)
    assert cfg.weight("fc1").bits == 15 and cfg.activation("conv1") == EXP(6)


def test_file_round_trip(tmp_path):
    cfg = NumberConfig({"a.weight": FIXED(5, 2, twos_complement=True),
                        "a.input": FLOAT(8, exponent=5, specials="ieee", saturate=False),
                        "b.weight": NumberFormat(FIXED(4).family, 0, 0, 6, 1)})
    path = tmp_path / "opt_conf.txt"
    write_config(cfg, path, header="best so far")
    assert path.read_text().startswith("# best so far\n")
    assert parse_config(path, register=False) == cfg


def test_every_bad_line_reported_with_its_number():
    text = "a.weight FLAOT 8\n\nb.weight FIXED x\nc.weight FIXED 8 0 9\na.weight FIXED 4\nd\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, register=False)
    msg = str(info.value)
    for needle in ("line 1", "unknown number type 'FLAOT'", "line 3", "bit width must be an "
                   "integer", "line 4", "too many fields", "line 6"):
        assert needle in msg
    assert "line 5" not in msg  # a.weight's first definition failed, so no duplicate


def test_duplicate_names_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="already set on line 1"):
        parse_config("a FIXED 8\na FIXED 4\n", register=False)
    with pytest.raises(ConfigError, match="not found"):
        parse_config(tmp_path / "nope.txt")


@pytest.mark.parametrize("spec", ["FIXED 0", "EXP 1", "FLOAT 8 exponent=9", "FIXED 8 specials=ieee",
                                  "FLOAT 8 specials=maybe", "FIXED 8 colour=red", "FIXED",
                                  "EXP 4 exponent=2", "BINARY 2"])
def test_bad_format_specs(spec):
    with pytest.raises(ConfigError):
        parse_format(spec)


formats = st.one_of(
    st.builds(lambda n, b: FIXED(n, b), st.integers(2, 32), st.integers(-20, 20)),
    st.builds(lambda n, b: EXP(n, b), st.integers(2, 9), st.integers(-5, 60)),
    st.builds(lambda n, e, s: FLOAT(n, exponent=min(e, n - 2), specials=s),
              st.integers(4, 32), st.integers(2, 8), st.sampled_from(["none", "ieee", "fn"])),
)


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,8}\.(weight|input)", fullmatch=True),
                       formats, min_size=1, max_size=6))
def test_text_round_trip_property(items):
    cfg = NumberConfig(items)
    assert parse_config(cfg.to_text(), register=False) == cfg


# -- descriptors --------------------------------------------------------------------------
def test_platform_with_kind_overrides(tmp_path):
    path = tmp_path / "fpga.yaml"
    path.write_text(textwrap.dedent("""\
        supported_formats:
          FPGA: ["FLOAT 32", "FLOAT 16", "FIXED 2-32", "EXP 2-9"]
          FPGA.activation: ["FLOAT 32", "FIXED 2..8"]
    """))
    p = load_platform(path)
    assert len(p.formats("FPGA", "weight")) == 2 + 31 + 8
    assert [f.bits for f in p.formats("FPGA", "activation")][1:] == list(range(2, 9))
    assert p.devices() == ["FPGA"]
    with pytest.raises(ConfigError, match="choose one of FPGA"):
        p.formats("GPU", "weight")


def test_platform_python_form(tmp_path):
    path = tmp_path / "plat.py"
    path.write_text('supported_formats = {"ASIC": ["FIXED 8", "FIXED 4"]}\n')
    assert [f.bits for f in load_platform(path).formats("ASIC", "activation")] == [8, 4]


def test_platform_errors_all_at_once():
    with pytest.raises(ConfigError) as info:
        platform_from_dict({"supported_formats": {"A": ["FIXED 9-3", "FLOT 8"], "B": []}})
    msg = str(info.value)
    assert "A[0]" in msg and "A[1]" in msg and "supported_formats.B" in msg


def test_network_descriptor_yaml(tmp_path):
    path = tmp_path / "lenet.yaml"
    path.write_text(textwrap.dedent("""\
        platform: FPGA
        cmd_smallset: ./caffe test -iterations 10
        cmd_fullset: ./caffe test -iterations 100
        err_margin: 0.07
        f_obj: default
        layer_name: [conv1, conv2]
        sub_layer_name: [[], [branch1, branch2]]
        layerwise_opt: WGT-ONLY
        wgt_size: [500, 25000]
        act_size: [784, 2880]
        act_max_abs: [0.996094, 5.05664]
        wgt_max_abs: [0.5794976, 0.16474459]
        get_result_regex: "Accuracy: (.*)"
    """))
    net = load_network(path)
    assert net.layerwise_opt is LayerwiseOpt.WGT_ONLY
    assert net.object_names(1, "weight") == ["conv2.weight", "branch1.weight", "branch2.weight"]
    assert net.size("activation", 1) == 2880 and net.max_abs("weight", 0) == 0.5794976


def test_network_errors_all_at_once():
    with pytest.raises(ConfigError) as info:
        network_from_dict({"layer_name": ["a", "b"], "err_margin": 1.5, "wgt_size": [1],
                           "layerwise_opt": "SOME", "get_result_regex": "no group",
                           "act_max_abs": [1.0, -2.0], "colour": 1}, "net.yaml")
    msg = str(info.value)
    for needle in ("net.yaml", "platform", "err_margin", "wgt_size", "layerwise_opt",
                   "get_result_regex", "act_max_abs[1]", "colour"):
        assert needle in msg


def test_binary_config_file_is_a_one_line_config_error(tmp_path):
    from npuweave.errors import ConfigError
    from npuweave.numbers import parse_config

    p = tmp_path / "cfg.txt"
    p.write_bytes(b"\xff\xfe\x00binary\x9c")
    with pytest.raises(ConfigError, match="not a text file") as exc:
        parse_config(p)
    assert str(p) in str(exc.value) and "\n" not in str(exc.value)
