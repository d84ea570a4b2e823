"""Generate the hostile-input corpus: malformed files and CLI values for every command.

Each ``Case`` is a command line plus the files it needs (written into an empty directory that
is the working directory of the run) and a text that the one-line error must contain (the
file, field, node or option at fault). ``tests/hostile/test_hostile.py`` runs every case;
``python tests/hostile/gen_hostile.py OUT`` writes the corpus to OUT (one folder per case, with
``argv.txt``) to try by hand.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from hostile_onnx import onnx_cases  # noqa: E402

FIFO = b"<fifo>"  # a file content that means: make a named pipe here
DIR = b"<dir>"  # ... make a directory here


@dataclass(frozen=True)
class Case:
    """One hostile run: ``npuweave *argv`` in a directory holding ``files``."""

    id: str
    argv: tuple[str, ...]
    files: dict[str, bytes] = field(default_factory=dict)
    expect: str = ""  # must appear in the error line (besides "error:")
    slow: bool = False  # run in a subprocess with a timeout (it used to hang)


GOOD_NPU = (b"pe_rows: 32\npe_cols: 32\nclock_hz: 1 GHz\ndram_bw: 100 GB/s\n"
            b"weight_buffer: 4 MiB\nact_buffer: 4 MiB\n")


def _bomb(levels: int = 9, width: int = 9) -> bytes:
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return ("\n".join(lines) + "\n").encode()


def yaml_attacks() -> dict[str, tuple[bytes, str]]:
    """Attacks shared by every YAML loader: name -> (text, expected substring)."""
    return {
        "alias_bomb": (_bomb(), "expands to more than"),
        "deep_flow": (b"a: " + b"[" * 3000 + b"]" * 3000 + b"\n", "nested deeper"),
        "deep_block": ("".join("  " * i + f"k{i}:\n" for i in range(400)).encode() + b"  " * 400
                       + b"x: 1\n", "nested deeper"),
        "duplicate_key": (b"pe_rows: 8\npe_rows: 16\n", "duplicate key 'pe_rows'"),
        "python_tag": (b"pe_rows: !!python/object/apply:os.system ['echo hi']\n", "tag"),
        "custom_tag": (b"pe_rows: !mytag 5\n", "tag"),
        "syntax": (b"pe_rows: [1, 2\n", "not valid YAML"),
        "tabs": (b"pe_rows:\n\t- 1\n", "not valid YAML"),
        "binary": (b"\xff\xfe\x00\x01\x80", "not a text file"),
        "two_documents": (b"a: 1\n---\nb: 2\n", "not valid YAML"),
        "control_chars": (b"pe_rows: 4\x01\x02\n", "non-printable"),
        "bom_then_garbage": (b"\xef\xbb\xbf: : :\n", "not valid YAML"),
        "huge_int": (b"pe_rows: " + b"9" * 5000 + b"\n", "line 1: an integer"),
    }


def npu_cases() -> list[Case]:
    cases = []
    for name, (text, expect) in yaml_attacks().items():
        cases.append(Case(f"npu_yaml_{name}", ("profile", "ncf", "--npu", "n.yaml"),
                          {"n.yaml": text}, expect, slow=name == "alias_bomb"))
    base = dict(l.split(": ", 1) for l in GOOD_NPU.decode().splitlines())  # noqa: E741
    fields = {
        "dram_bw_gigabit_mib": ("dram_bw", "300 MiB", "dram_bw"),
        "dram_bw_as_clock": ("dram_bw", "1 GHz", "dram_bw"),
        "dram_bw_negative": ("dram_bw", "-5 GB/s", "dram_bw"),
        "dram_bw_zero": ("dram_bw", "0", "dram_bw"),
        "dram_bw_inf": ("dram_bw", ".inf", "dram_bw"),
        "dram_bw_nan": ("dram_bw", ".nan", "dram_bw"),
        "dram_bw_words": ("dram_bw", "fast", "dram_bw"),
        "dram_bw_hz_per_s": ("dram_bw", "5 Hz/s", "dram_bw"),
        "clock_bandwidth": ("clock_hz", "1 GB/s", "clock_hz"),
        "clock_size": ("clock_hz", "1 MiB", "clock_hz"),
        "clock_zero": ("clock_hz", "0 Hz", "clock_hz"),
        "clock_bool": ("clock_hz", "true", "clock_hz"),
        "clock_list": ("clock_hz", "[1, 2]", "clock_hz"),
        "weight_buffer_hz": ("weight_buffer", "24 MHz", "weight_buffer"),
        "weight_buffer_bandwidth": ("weight_buffer", "24 GB/s", "weight_buffer"),
        "weight_buffer_zero": ("weight_buffer", "0", "weight_buffer"),
        "act_buffer_negative": ("act_buffer", "-1 MiB", "act_buffer"),
        "act_buffer_huge": ("act_buffer", "'1e400 B'", "act_buffer"),
        "pe_rows_zero": ("pe_rows", "0", "pe_rows"),
        "pe_rows_negative": ("pe_rows", "-1", "pe_rows"),
        "pe_rows_float": ("pe_rows", "1.5", "pe_rows"),
        "pe_rows_string": ("pe_rows", "many", "pe_rows"),
        "pe_rows_huge": ("pe_rows", "100000000000", "pe_rows"),
        "lmem_banks_million": ("lmem_banks", "1000000", "lmem_banks"),
        "lmem_banks_zero": ("lmem_banks", "0", "lmem_banks"),
        "precision_bits_huge": ("precision_bits", "4096", "precision_bits"),
        "latency_negative": ("dram_latency_cycles", "-3", "dram_latency_cycles"),
        "mesh_shape": ("mesh", "[2, 2, 2]", "mesh"),
        "dataflow": ("dataflow", "os", "dataflow"),
        "unknown_field": ("colour", "red", "colour"),
    }
    for name, (key, value, expect) in fields.items():
        spec = "".join(f"{k}: {v}\n" for k, v in {**base, key: value}.items())
        cases.append(Case(f"npu_field_{name}", ("profile", "ncf", "--npu", "n.yaml"),
                          {"n.yaml": spec.encode()}, expect))
    for name, text, expect in (("missing_fields", b"pe_rows: 4\n", "missing required field"),
                               ("a_list", b"- 1\n- 2\n", "expected a mapping"),
                               ("a_scalar", b"42\n", "expected a mapping"),
                               ("empty", b"", "expected a mapping")):
        cases.append(Case(f"npu_{name}", ("profile", "ncf", "--npu", "n.yaml"),
                          {"n.yaml": text}, expect))
    cases.append(Case("npu_fifo", ("profile", "ncf", "--npu", "n.yaml"), {"n.yaml": FIFO},
                      "named pipe", slow=True))
    cases.append(Case("npu_directory", ("profile", "ncf", "--npu", "n.yaml"), {"n.yaml": DIR},
                      "directory"))
    cases.append(Case("npu_missing_file", ("profile", "ncf", "--npu", "nope.yaml"), {},
                      "nope.yaml"))
    return cases


def model_cases() -> list[Case]:
    cases = []
    for name, (data, expect) in onnx_cases().items():
        cases.append(Case(f"onnx_profile_{name}", ("profile", "m.onnx", "--npu", "prema"),
                          {"m.onnx": data}, expect or "m.onnx"))
    # the same importer behind every command that takes a model
    for name in ("conv_group_0", "conv_kernel_larger_than_input", "identity_only",
                 "garbage_bytes", "expand_huge"):
        data, expect = onnx_cases()[name]
        cases.append(Case(f"onnx_schedule_{name}",
                          ("schedule", "--models", "m.onnx,ncf", "--npu", "prema",
                           "--requests", "1"), {"m.onnx": data}, expect or "m.onnx"))
        cases.append(Case(f"onnx_compile_{name}", ("compile", "groups", "m.onnx"),
                          {"m.onnx": data}, expect or "m.onnx"))
    cases += [
        Case("onnx_fifo", ("profile", "m.onnx"), {"m.onnx": FIFO}, "not a regular file",
             slow=True),
        Case("onnx_directory", ("profile", "m.onnx"), {"m.onnx": DIR}, "directory"),
        Case("onnx_missing", ("profile", "gone.onnx"), {}, "gone.onnx"),
        Case("zoo_unknown_model", ("profile", "resnet5000"), {}, "resnet5000"),
        Case("zoo_bad_param", ("profile", "bert-base:seq_len"), {}, "seq_len"),
        Case("zoo_param_unknown", ("profile", "bert-base:colour=red"), {}, "colour"),
        Case("zoo_param_negative", ("profile", "bert-base:seq_len=-4"), {}, "seq_len"),
        Case("zoo_export_unknown", ("zoo", "export", "nosuch", "x.onnx"), {}, "nosuch"),
    ]
    return cases


GOOD_NET = (b"platform: FPGA\nlayer_name: [fc1, fc2]\nwgt_size: [100, 50]\n"
            b"act_size: [10, 5]\nlayerwise_opt: WGT-ONLY\ncmd_fullset: python -c 'print(1)'\n")
GOOD_PLATFORM = b'supported_formats:\n  FPGA: ["FLOAT 32", "FIXED 2-16"]\n'


def numbers_cases() -> list[Case]:
    tune = ("numbers", "tune", "-n", "net.yaml", "-p", "plat.yaml")
    cases = []
    for name, (text, expect) in yaml_attacks().items():
        text = text.replace(b"pe_rows", b"platform")
        expect = expect.replace("pe_rows", "platform")
        cases.append(Case(f"net_yaml_{name}", tune, {"net.yaml": text,
                                                     "plat.yaml": GOOD_PLATFORM}, expect,
                          slow=name == "alias_bomb"))
        cases.append(Case(f"platform_yaml_{name}", tune, {"net.yaml": GOOD_NET,
                                                          "plat.yaml": text}, expect))
    net_fields = {
        "err_margin_big": ("err_margin", "1.5", "err_margin"),
        "err_margin_string": ("err_margin", "lots", "err_margin"),
        "layerwise_bad": ("layerwise_opt", "SOME", "layerwise_opt"),
        "sizes_short": ("wgt_size", "[1]", "wgt_size"),
        "sizes_negative": ("act_size", "[-1, 2]", "act_size"),
        "regex_no_group": ("get_result_regex", "'Accuracy'", "get_result_regex"),
        "regex_invalid": ("get_result_regex", "'(['", "get_result_regex"),
        "timeout_negative": ("eval_timeout_s", "-1", "eval_timeout_s"),
        "timeout_huge": ("eval_timeout_s", "1e12", "eval_timeout_s"),
        "timeout_bool": ("eval_timeout_s", "true", "eval_timeout_s"),
        "quantize_bad": ("quantize", "everything", "quantize"),
        "layer_names_dup": ("layer_name", "[fc1, fc1]", "layer_name"),
        "unknown_field": ("colour", "red", "colour"),
    }
    for name, (key, value, expect) in net_fields.items():
        text = GOOD_NET + f"{key}: {value}\n".encode()
        if key in ("wgt_size", "act_size", "layer_name"):
            text = b"\n".join(l for l in GOOD_NET.split(b"\n")  # noqa: E741
                              if not l.startswith(key.encode())) + f"\n{key}: {value}\n".encode()
        cases.append(Case(f"net_field_{name}", tune, {"net.yaml": text,
                                                      "plat.yaml": GOOD_PLATFORM}, expect))
    for name, text, expect in (
            ("bad_format", b'supported_formats:\n  FPGA: ["FLOAT x"]\n', "FPGA"),
            ("empty_list", b"supported_formats:\n  FPGA: []\n", "FPGA"),
            ("reversed_range", b'supported_formats:\n  FPGA: ["FIXED 9-2"]\n', "9-2"),
            ("huge_width", b'supported_formats:\n  FPGA: ["FIXED 2-100000000"]\n', "FPGA")):
        cases.append(Case(f"platform_{name}", tune, {"net.yaml": GOOD_NET, "plat.yaml": text},
                          expect))
    cases += [
        Case("tune_missing_network", ("numbers", "tune", "-n", "none.yaml", "-p", "plat.yaml"),
             {"plat.yaml": GOOD_PLATFORM}, "none.yaml"),
        Case("tune_fifo_network", tune, {"net.yaml": FIFO, "plat.yaml": GOOD_PLATFORM},
             "net.yaml", slow=True),
        Case("tune_eval_timeout_zero", (*tune, "--eval-timeout", "0"),
             {"net.yaml": GOOD_NET, "plat.yaml": GOOD_PLATFORM}, "--eval-timeout"),
        Case("tune_max_evaluations_1", (*tune, "--max-evaluations", "1"),
             {"net.yaml": GOOD_NET, "plat.yaml": GOOD_PLATFORM}, "--max-evaluations"),
        Case("tune_evaluate_not_importable", (*tune, "--evaluate", "nosuchmod:f"),
             {"net.yaml": GOOD_NET, "plat.yaml": GOOD_PLATFORM}, "nosuchmod"),
    ]
    return cases


def _npy(header: str, payload: bytes = b"") -> bytes:
    text = header.encode("latin1")
    pad = 64 - (10 + len(text) + 1) % 64
    text += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + payload


def npy_cases() -> list[Case]:
    q = ("numbers", "quantize", "x.npy", "-f", "FIXED 8")
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }"
    files = {
        "huge_header": (_npy(hdr % "(100000000000,)"), "100000000000"),
        "truncated": (_npy(hdr % "(1000,)", b"\0" * 40), "truncated"),
        "not_npy": (b"PK\x03\x04 not numpy", "not a .npy"),
        "empty": (b"", "x.npy"),
        "object_dtype": (_npy("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }"),
                         "x.npy"),
        "complex_dtype": (_npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
                               b"\0" * 8), "x.npy"),
        "bad_header": (_npy("{'descr': '<f4', 'shape': (2,}"), "x.npy"),
        "negative_shape": (_npy(hdr % "(-5,)"), "x.npy"),
        "fifo": (FIFO, "not a regular file"),
        "directory": (DIR, "x.npy"),
    }
    cases = [Case(f"npy_{name}", q, {"x.npy": data}, expect, slow=data is FIFO)
             for name, (data, expect) in files.items()]
    cases.append(Case("npy_missing", q, {}, "x.npy"))
    cfgs = {
        "garbage": (b"this is not a config\n", "line 1"),
        "bad_width": (b"fc1.weight FIXED 0\n", "line 1"),
        "duplicate": (b"fc1.weight FIXED 8\nfc1.weight FIXED 4\n", "line 2"),
        "binary": (b"\xff\xfe\x00", "not a text file"),
        "fifo": (FIFO, "f.txt"),
    }
    for name, (data, expect) in cfgs.items():
        cases.append(Case(f"formats_{name}", ("profile", "ncf", "--formats", "f.txt"),
                          {"f.txt": data}, expect, slow=data is FIFO))
    return cases


def cli_value_cases() -> list[Case]:
    sch = ("schedule", "--models", "ncf,ncf", "--npu", "prema")
    c = [
        ("batch_zero", ("profile", "ncf", "--batch", "0"), "--batch"),
        ("batch_huge", ("profile", "ncf", "--batch", "100000000"), "batch"),
        ("batch_float", ("profile", "ncf", "--batch", "1e9"), "--batch"),
        ("schedule_batch_zero", (*sch, "--batch", "0"), "--batch"),
        ("schedule_batch_huge", (*sch, "--batch", "1000000000"), "batch"),
        ("schedule_requests_zero", (*sch, "--requests", "0"), "--requests"),
        ("schedule_requests_huge", (*sch, "--requests", "1000000000"), "--requests"),
        ("schedule_window_inf", (*sch, "--requests", "2", "--window-s", "inf"), "--window-s"),
        ("schedule_window_nan", (*sch, "--window-s", "nan"), "--window-s"),
        ("schedule_window_negative", (*sch, "--window-s", "-1"), "--window-s"),
        ("schedule_window_huge", (*sch, "--window-s", "1e9"), "--window-s"),
        ("schedule_unknown_scheduler", (*sch, "--scheduler", "magic"), "magic"),
        ("schedule_unknown_compare", (*sch, "--compare", "magic"), "magic"),
        ("schedule_empty_models", ("schedule", "--models", ","), "--models"),
        ("schedule_unknown_cost_model", (*sch, "--cost-model", "guess"), "guess"),
        ("profile_unknown_npu", ("profile", "ncf", "--npu", "tpu-v9"), "tpu-v9"),
        ("profile_unknown_cost_model", ("profile", "ncf", "--cost-model", "guess"), "guess"),
        ("compile_batch_huge", ("compile", "groups", "ncf", "--batch", "1000000000"), "batch"),
        ("compile_batch_zero", ("compile", "groups", "ncf", "--batch", "0"), "--batch"),
        ("compile_unknown_method", ("compile", "groups", "ncf", "--method", "ilp"), "--method"),
        ("quantize_seed_negative", ("numbers", "quantize", "x.npy", "-f", "FIXED 8",
                                    "--rounding", "stochastic", "--seed", "-1"), "--seed"),
        ("quantize_bad_format", ("numbers", "quantize", "x.npy", "-f", "FIXED -3"), "--format"),
        ("info_bad_format", ("numbers", "info", "FLOAT", "banana"), "banana"),
        ("info_unknown_family", ("numbers", "info", "POSIT", "8"), "POSIT"),
        ("demo_margin_big", ("numbers", "demo", "--margin", "1.5"), "--margin"),
        ("demo_seed_negative", ("numbers", "demo", "--seed", "-1"), "--seed"),
        ("npu_demo_requests_zero", ("demo", "--requests", "0"), "--requests"),
        ("reproduce_requests_zero", ("reproduce", "layerweaver", "--requests", "0"),
         "requests"),
        ("reproduce_requests_huge", ("reproduce", "layerweaver", "--requests", "10000000"),
         "--requests"),
        ("npu_demo_requests_huge", ("demo", "--requests", "100000"), "--requests"),
        ("reproduce_bad_pair", ("reproduce", "layerweaver", "--pairs", "XX+YY"), "XX"),
        ("unknown_command", ("frobnicate",), "frobnicate"),
    ]
    import io

    import numpy as np
    buf = io.BytesIO()
    np.save(buf, np.ones(4, np.float32))
    return [Case(f"cli_{name}", argv, {"x.npy": buf.getvalue()}, expect)
            for name, argv, expect in c]


def output_cases() -> list[Case]:
    sch = ("schedule", "--models", "ncf,ncf", "--npu", "prema", "--requests", "1")
    c = [
        ("schedule_timeline_suffix", (*sch, "--timeline", "t.xyz"), {}, "t.xyz"),
        ("schedule_timeline_dir", (*sch, "--timeline", "out.png"), {"out.png": DIR}, "out.png"),
        ("schedule_json_fifo", (*sch, "--json", "r.json"), {"r.json": FIFO}, "r.json"),
        ("schedule_trace_dir", (*sch, "--trace", "t.json"), {"t.json": DIR}, "t.json"),
        ("schedule_json_parent_is_file", (*sch, "--json", "f/r.json"), {"f": b"x"}, "f/r.json"),
        ("profile_csv_fifo", ("profile", "ncf", "--csv", "o.csv"), {"o.csv": FIFO}, "o.csv"),
        ("profile_json_dir", ("profile", "ncf", "--json", "o.json"), {"o.json": DIR}, "o.json"),
        # no real device nodes here: as root, a regression would replace /dev/null for the
        # whole machine (test_atomic_writer checks devices without writing to them)
        ("schedule_csv_parent_is_file", (*sch, "--csv", "f/r.csv"), {"f": b"x"}, "f/r.csv"),
        ("compile_png_suffix", ("compile", "groups", "ncf", "--png", "g.txt"), {}, "g.txt"),
        ("compile_json_fifo", ("compile", "groups", "ncf", "--json", "g.json"),
         {"g.json": FIFO}, "g.json"),
        ("zoo_export_dir", ("zoo", "export", "ncf", "x.onnx"), {"x.onnx": DIR}, "x.onnx"),
        ("zoo_export_fifo", ("zoo", "export", "ncf", "x.onnx"), {"x.onnx": FIFO}, "x.onnx"),
        ("reproduce_csv_dir", ("reproduce", "layerweaver", "--requests", "1", "--csv", "d"),
         {"d": DIR}, "d"),
        ("quantize_out_fifo", ("numbers", "quantize", "x.npy", "-f", "FIXED 8", "-o", "y.npy"),
         {"y.npy": FIFO}, "y.npy"),
    ]
    import io

    import numpy as np
    buf = io.BytesIO()
    np.save(buf, np.ones(4, np.float32))
    return [Case(f"out_{name}", argv, {"x.npy": buf.getvalue(), **files}, expect)
            for name, argv, files, expect in c]


def ir_cases() -> list[Case]:
    deep = b"[" * 100000 + b"]" * 100000
    files = {
        "not_json": (b"{ not json", "ir.json"),
        "a_list": (b"[1, 2, 3]", "ir.json"),
        "empty_object": (b"{}", "ir.json"),
        "deep_nesting": (deep, "ir.json"),
        "binary": (b"\xff\xfe\x00\x01", "ir.json"),
        "nan_values": (b'{"coreNum": NaN}', "ir.json"),
    }
    cases = [Case(f"ir_{name}", ("ir", "info", "ir.json"), {"ir.json": data}, expect)
             for name, (data, expect) in files.items()]
    cases += [Case("ir_timeline_suffix", ("ir", "timeline", "ir.json", "-o", "t.xyz"),
                   {"ir.json": b"{}"}, "t.xyz"),
              Case("ir_timeline_trace_dir", ("ir", "timeline", "ir.json", "-o", "t.png",
                                             "--trace", "d"), {"ir.json": b"{}", "d": DIR}, "d"),
              Case("ir_simulate_missing", ("ir", "simulate", "none.json"), {}, "none.json")]
    return cases


def all_cases() -> list[Case]:
    """Every hostile case, ids unique."""
    cases = (npu_cases() + model_cases() + numbers_cases() + npy_cases() + cli_value_cases()
             + output_cases() + ir_cases())
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    return cases


def materialize(case: Case, root: Path) -> None:
    """Write a case's files (named pipes and folders included) under ``root``."""
    import os

    for name, data in case.files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if data is FIFO:
            os.mkfifo(path)
        elif data is DIR:
            path.mkdir()
        else:
            path.write_bytes(data)


def main(out: str) -> None:
    root = Path(out)
    for case in all_cases():
        folder = root / case.id
        folder.mkdir(parents=True, exist_ok=True)
        materialize(case, folder)
        (folder / "argv.txt").write_text(json.dumps(["npuweave", *case.argv]) + "\n")
    print(f"wrote {len(all_cases())} cases under {root}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "hostile-corpus")
