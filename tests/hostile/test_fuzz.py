"""Fuzzing the user-facing readers: any input either loads or raises an NpuweaveError.

ONNX importer (structured models with arbitrary shapes and attributes, and mutated bytes),
the NPU YAML loader (arbitrary field values and arbitrary text), the Gemini IR reader
(arbitrary bytes; tests/gemini/test_ir_fuzz.py covers structured documents), the number
configuration parser (arbitrary lines), sweep specs (arbitrary documents) and request traces
(CSV rows and JSON documents). A loaded model must also cost without error and with
non-negative MACs, a loaded trace must hold sorted finite times: a silent wrong answer counts
as a failure. Errors are one line naming the file.
"""

from __future__ import annotations

import csv
import io
import json
import math

import yaml
from hostile_onnx import conv, gemm, matmul, pool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npuweave.compile import gemini
from npuweave.cost import profile
from npuweave.errors import NpuweaveError
from npuweave.experiments.sweep.spec import sweep_from_dict
from npuweave.hardware import load_npu, npu_from_dict, preset
from npuweave.numbers import parse_config
from npuweave.sim.traces import from_trace
from npuweave.workload import lower
from npuweave.workload.onnx_import import import_onnx

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
NPU = preset("prema")

small = st.integers(-3, 9)


def _import_and_cost(data: bytes, tmp_path) -> None:
    path = tmp_path / "fuzz.onnx"
    path.write_bytes(data)
    try:
        layers = lower(import_onnx(path))
    except NpuweaveError as err:
        assert "\n" not in str(err) and "fuzz.onnx" in str(err)
        return
    for cost in profile(layers, NPU, batch=1):
        assert cost.macs >= 0 and cost.compute_s >= 0 and math.isfinite(cost.compute_s)
    for layer in layers:
        assert layer.macs >= 0 and layer.in_elems >= 0 and layer.out_elems >= 0


@FUZZ
@given(n=st.integers(1, 2), c=small, h=small, w=small, m=small, cg=small, k=st.integers(-1, 9),
       group=st.integers(-1, 6), stride=st.integers(-1, 3), pad=st.integers(-2, 3),
       dil=st.integers(-1, 3))
def test_conv_models_load_or_raise(tmp_path, n, c, h, w, m, cg, k, group, stride, pad, dil):
    try:
        data = conv([n, c, h, w], [m, cg, k, k], group=group, strides=[stride, stride],
                    pads=[pad] * 4, dilations=[dil, dil])
    except ValueError:  # onnx.helper refuses some negative initializer shapes itself
        return
    _import_and_cost(data, tmp_path)


@FUZZ
@given(op=st.sampled_from(["MaxPool", "AveragePool"]), h=small, k=st.integers(-1, 12),
       stride=st.integers(-1, 3), pad=st.integers(-1, 3))
def test_pool_models_load_or_raise(tmp_path, op, h, k, stride, pad):
    _import_and_cost(pool(op, [1, 4, h, h], kernel_shape=[k, k], strides=[stride, stride],
                          pads=[pad] * 4), tmp_path)


@FUZZ
@given(a=st.lists(st.integers(0, 70), min_size=2, max_size=3),
       b=st.lists(st.integers(0, 70), min_size=1, max_size=2),
       use_gemm=st.booleans(), ta=st.integers(0, 1), tb=st.integers(0, 1))
def test_matrix_models_load_or_raise(tmp_path, a, b, use_gemm, ta, tb):
    data = (gemm(a[:2], (b + [5])[:2], transA=ta, transB=tb) if use_gemm else matmul(a, b))
    _import_and_cost(data, tmp_path)


@FUZZ
@given(st.data())
def test_mutated_onnx_bytes_load_or_raise(tmp_path, data):
    blob = bytearray(conv([1, 3, 8, 8], [4, 3, 3, 3]))
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(blob) - 1))
        blob[i] = data.draw(st.integers(0, 255))
    _import_and_cost(bytes(blob), tmp_path)


def test_non_utf8_byte_anywhere_loads_or_raises(tmp_path):
    """0x80 (never a first UTF-8 byte) at every position: a name protobuf cannot decode as
    text (it hands back bytes) is a one-line ModelImportError, not a UnicodeDecodeError deep
    in onnx.helper (hypothesis found one at a tensor name)."""
    blob = conv([1, 3, 8, 8], [4, 3, 3, 3])
    raised = 0
    for i in range(len(blob)):
        path = tmp_path / "fuzz.onnx"
        path.write_bytes(blob[:i] + b"\x80" + blob[i + 1:])
        try:
            lower(import_onnx(path))
        except NpuweaveError as err:
            assert "\n" not in str(err) and "fuzz.onnx" in str(err)
            raised += "UTF-8" in str(err)
    assert raised > 0  # some position falls inside a name


def test_unknown_element_type_and_control_characters_are_one_line_errors(tmp_path):
    """Two more the mutation fuzz found: an input whose element type is no ONNX data type
    (was a ValueError from protobuf's enum), and a name holding a newline (was a two-line
    message)."""
    import onnx
    import pytest

    m = onnx.load_from_string(conv([1, 3, 8, 8], [4, 3, 3, 3]))
    m.graph.input[0].type.tensor_type.elem_type = 122
    path = tmp_path / "fuzz.onnx"
    path.write_bytes(m.SerializeToString())
    with pytest.raises(NpuweaveError, match="element type 122, which is not an ONNX data type"):
        lower(import_onnx(path))
    m = onnx.load_from_string(conv([1, 3, 8, 8], [4, 3, 3, 3]))
    m.graph.input[0].type.tensor_type.ClearField("shape")
    m.graph.input[0].name = "x\ny"
    path.write_bytes(m.SerializeToString())
    with pytest.raises(NpuweaveError) as err:
        lower(import_onnx(path))
    assert "\n" not in str(err.value) and "x\\ny" in str(err.value)


FIELDS = ["pe_rows", "pe_cols", "arrays", "clock_hz", "dram_bw", "weight_buffer",
          "act_buffer", "lmem_banks", "lmem_bytes", "mesh", "cores", "dataflow",
          "dram_latency_cycles", "colour"]
values = (st.none() | st.booleans() | st.integers(-10, 2**70) | st.floats()
          | st.text(max_size=12)
          | st.sampled_from(["1 GHz", "300 Gb/s", "4 MiB", "1 GB/s", "24 MHz", "-5 GB/s",
                             "1e400 B", "nan", "inf", "2 Hz/s", "3 KiB/s"])
          | st.lists(st.integers(-2, 4), max_size=3))


@FUZZ
@given(st.dictionaries(st.sampled_from(FIELDS), values, max_size=10))
def test_npu_dicts_load_or_raise(raw):
    base = {"pe_rows": 4, "pe_cols": 4, "clock_hz": "1 GHz", "dram_bw": "1 GB/s",
            "weight_buffer": "1 MiB", "act_buffer": "1 MiB"}
    try:
        npu = npu_from_dict({**base, **raw}, "fuzz.yaml")
    except NpuweaveError as err:
        assert "\n" not in str(err) and "fuzz.yaml" in str(err)
        return
    assert npu.dram_bw > 0 and npu.clock_hz > 0 and npu.weight_buffer > 0


@FUZZ
@given(st.text(max_size=200) | st.binary(max_size=200).map(lambda b: b.decode("latin1")))
def test_npu_yaml_text_loads_or_raises(tmp_path, text):
    path = tmp_path / "fuzz.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        load_npu(path)
    except NpuweaveError as err:
        assert "\n" not in str(err) and "fuzz.yaml" in str(err)


@FUZZ
@given(st.recursive(st.none() | st.integers() | st.text(max_size=5),
                    lambda kids: st.lists(kids, max_size=3)
                    | st.dictionaries(st.sampled_from(FIELDS), kids, max_size=3),
                    max_leaves=15))
def test_npu_yaml_documents_load_or_raise(tmp_path, doc):
    path = tmp_path / "fuzz.yaml"
    path.write_text(yaml.safe_dump(doc))
    try:
        load_npu(path)
    except NpuweaveError as err:
        assert "\n" not in str(err)


@FUZZ
@given(st.binary(max_size=300))
def test_ir_bytes_load_or_raise(blob):
    try:
        gemini.loads(blob, source="fuzz.json")
    except NpuweaveError as err:
        assert "\n" not in str(err) and "fuzz.json" in str(err)


line = st.one_of(
    st.text(max_size=40),
    st.builds(lambda n, f, a, b: f"{n} {f} {a} {b}",
              st.sampled_from(["fc1.weight", "conv1.input", "x", ""]),
              st.sampled_from(["FIXED", "FLOAT", "EXP", "BINARY", "INT", "fixed", ""]),
              st.integers(-5, 80), st.integers(-300, 300)),
    st.sampled_from(["fc.weight FLOAT 8 7 exponent=9", "a FIXED <1,0,7,2>", "b FLOAT 32 # c",
                     "c EXP 5 specials=ieee saturate=maybe", "d FIXED <1,2>"]),
)


@FUZZ
@given(st.lists(line, min_size=1, max_size=6))
def test_number_config_text_parses_or_raises(lines):
    text = "\n".join(lines) + "\n"  # a newline: parsed as text, not as a path
    try:
        cfg = parse_config(text, register=False)
    except NpuweaveError as err:
        assert "\n" not in str(err)
        return
    for fmt in cfg.values():
        assert fmt.bits >= 1


def test_every_error_escapes_line_breaks_quoted_from_the_input():
    """Any NpuweaveError stays one line, whatever it quotes: the sweep reader named an axis
    as written, so a YAML key holding a newline gave a two-line error (found by fuzzing sweep
    specs); every character ``str.splitlines`` breaks at is escaped as Python writes it."""
    import pytest

    from npuweave.errors import ConfigError
    from npuweave.experiments.sweep.spec import sweep_from_dict

    err = ConfigError("a\nb\rc\x0bd\x1ce\x85f\u2028g\u2029h\ti\x7fj")
    assert str(err).splitlines() == [str(err)]
    assert str(err) == r"a\nb\rc\x0bd\x1ce\x85f\u2028g\u2029h\ti\x7fj"
    with pytest.raises(NpuweaveError) as got:
        sweep_from_dict({"kind": "profile", "fixed": {"models": "ncf"}, "axes": {"a\nb": None}},
                        "fuzz.yaml")
    assert str(got.value).splitlines() == [str(got.value)]
    assert "fuzz.yaml" in str(got.value) and r"axes.a\nb" in str(got.value)


def test_cli_prints_a_quoted_newline_on_one_line(tmp_path, capsys, monkeypatch):
    import pytest

    from npuweave.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "e.yaml").write_text('kind: profile\nfixed: {models: ncf}\naxes: {"a\\nb": 3}\n')
    with pytest.raises(SystemExit) as done:
        main(["sweep", "e.yaml", "--out", "r.csv"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and len(err.splitlines()) == 1 and err.startswith("error: ")
    assert r"axes.a\nb" in err and not (tmp_path / "r.csv").exists()


def _one_line_naming(err: NpuweaveError, name: str) -> None:
    assert str(err).splitlines() == [str(err)] and name in str(err), str(err)


SETTINGS = ["models", "model", "qps", "batch", "scheduler", "seed", "requests", "npu",
            "deadline", "duration", "arrivals", "priority", "slo", "ratio", "a\nb", "x"]
leaf = (st.none() | st.booleans() | st.integers(-5, 2**64) | st.floats() | st.text(max_size=6)
        | st.sampled_from(["RN,BB", "ncf", "resnet50", "llama-7b", "layerweaver", "fcfs", "10ms",
                           "poisson", "1:1", "memory-centric", "window:2ms:max8", "a\nb", "1e400"]))
setting = st.recursive(leaf, lambda kids: st.lists(kids, max_size=3)
                       | st.dictionaries(st.sampled_from(SETTINGS), kids, max_size=3),
                       max_leaves=8)
settings_map = st.dictionaries(st.sampled_from(SETTINGS), setting, max_size=4)
sweep_doc = st.fixed_dictionaries({}, optional={
    "kind": st.sampled_from(["schedule", "profile", "serve", "capacity", "llm-serve"]) | leaf,
    "fixed": settings_map | leaf,
    "axes": st.dictionaries(st.sampled_from(SETTINGS), st.lists(setting, max_size=3) | leaf,
                            max_size=3) | leaf,
    "points": st.lists(settings_map, max_size=2) | leaf,
    "mode": st.sampled_from(["product", "zip"]) | leaf, "name": leaf, "max_points": leaf,
    "typo": leaf})


@FUZZ
@given(sweep_doc)
def test_sweep_specs_load_or_raise(doc):
    try:
        spec = sweep_from_dict(doc, "fuzz.yaml")
    except NpuweaveError as err:
        _one_line_naming(err, "fuzz.yaml")
        return
    assert spec.points and len({p.point_id for p in spec.points}) == len(spec.points)


def _trace_loads_or_raises(path) -> None:
    try:
        a = from_trace(path)
    except NpuweaveError as err:
        _one_line_naming(err, path.name)
        return
    t = [float(x) for x in a.time_s]
    assert t and all(math.isfinite(x) and x >= 0 for x in t) and t == sorted(t)


columns = st.sampled_from(["time", "model", "priority", "deadline", "time_s", "deadline_s",
                           "arrival", " Time ", "x", ""])
cell = st.sampled_from(["0", "1ms", "2 ms", "resnet50", "ncf", "-1", "nan", "inf", "1e400", "3",
                        "true", " ", "none", "5us", "1h", "1,5", '"']) | st.text(max_size=8)


@FUZZ
@given(st.lists(columns, max_size=5), st.lists(st.lists(cell, max_size=5), max_size=5))
def test_csv_traces_load_or_raise(tmp_path, header, rows):
    buf = io.StringIO()
    csv.writer(buf).writerows([header, *rows])
    path = tmp_path / "fuzz.csv"
    path.write_text(buf.getvalue(), encoding="utf-8", errors="surrogatepass")
    _trace_loads_or_raises(path)


@FUZZ
@given(st.lists(st.dictionaries(columns, setting | cell, max_size=5), max_size=4) | setting,
       st.booleans())
def test_json_traces_load_or_raise(tmp_path, doc, wrap):
    path = tmp_path / "fuzz.json"
    path.write_text(json.dumps({"requests": doc} if wrap else doc), encoding="utf-8",
                    errors="surrogatepass")
    _trace_loads_or_raises(path)


def test_serve_sweep_without_its_rate_is_one_error_and_points_alone_suffice(tmp_path, capsys,
                                                                            monkeypatch):
    """Found by the sweep fuzz: a serve sweep without 'qps' raised KeyError from the per-point
    check (it ran before the 'missing setting' one), and so did fixed settings completed by
    the listed points (the check also tried 'fixed' alone, which is no point)."""
    import pytest

    from npuweave.cli import main

    with pytest.raises(NpuweaveError, match="missing setting 'qps'"):
        sweep_from_dict({"kind": "serve", "fixed": {"models": "ncf"}}, "fuzz.yaml")
    spec = sweep_from_dict({"kind": "serve", "fixed": {"models": "ncf"},
                            "points": [{"qps": "10"}, {"qps": "20"}]}, "fuzz.yaml")
    assert sorted(dict(p.params)["qps"] for p in spec.points) == ["10", "20"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "e.yaml").write_text("kind: serve\nfixed: {models: ncf}\n")
    with pytest.raises(SystemExit) as done:
        main(["sweep", "e.yaml", "--out", "r.csv"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and len(err.splitlines()) == 1 and "'qps'" in err


def test_a_header_with_two_doubled_columns_names_the_first_one(tmp_path):
    """The duplicate-column check walked a set, so which of two doubled columns the error
    named followed the interpreter's hash seed (3 runs of 6 each way). Every order of the
    columns: the first doubled one is named. (In one process a set's order is fixed, so the
    orders that start with the other column fail without the fix, whatever the seed.)"""
    import itertools

    import pytest

    path = tmp_path / "dup.csv"
    for cols in set(itertools.permutations(["model", "time", "time_s", "model"])):
        path.write_text(",".join(cols) + "\n")
        first = "model" if cols.index("model") < min(cols.index("time"), cols.index("time_s")) \
            else "time"
        with pytest.raises(NpuweaveError, match=f"all give the {first}; keep one"):
            from_trace(path)
