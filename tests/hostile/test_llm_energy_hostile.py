"""Hostile input to the LLM and energy commands: ``serve``/``capacity`` with an LLM,
``profile`` of LLM phases, ``reproduce sarathi``/``scalesim-v3-energy``, ``llm-serve`` sweeps
and ``energy:`` sections of NPU files.

Every case ends in exactly one ``error:`` line that names the option, file or field, exit 2,
before any work: no file or folder appears. The cases marked "was" failed before the fix named
there (a traceback, or exit 0 with a nonsense result).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from npuweave.cli import main

NPU = ("pe_rows: 32\npe_cols: 32\nclock_hz: 1 GHz\ndram_bw: 100 GB/s\nweight_buffer: 4 MiB\n"
       "act_buffer: 4 MiB\nglobal_mem_bytes: 4 GiB\n")
ENERGY = {
    "neg": "mac_pj: -1 pJ", "nan": "mac_pj: nan pJ", "inf": "mac_pj: .inf",
    "static_as_energy": "static_mw:\n    array: 5 pJ", "unknown": "mac_joules: 1 pJ",
    "gate": "gating: [bogus]", "wake_neg": "wake_up_s: -1 us",
    "no_per_byte": "dram_pj_per_byte: 3.9 pJ", "huge": "mac_pj: 1e300 pJ",
    "dup": "mac_pj: 1 pJ\n  mac_pj: 2 pJ", "counts": "dram_counts: sometimes",
    "bool": "mac_pj: true", "static_list": "static_mw: [1, 2]",
    "static_neg": "static_mw:\n    array: -5 mW", "static_comp": "static_mw:\n    gpu: 5 mW",
    "per_byte_on_mac": "mac_pj: 1.5 pJ/B", "power_per_byte": "dram_pj_per_byte: 3.9 mW/B",
    "source_list": "source: [1, 2]", "wake_huge": "wake_up_s: 1e300",
    "pe_idle_neg": "pe_idle_pj: -0.1 pJ",
}
FILES = {f"e_{k}.yaml": f"{NPU}energy:\n  {v}\n" for k, v in ENERGY.items()}
FILES.update({
    "e_scalar.yaml": NPU + "energy: 5\n", "e_list.yaml": NPU + "energy:\n  - mac_pj: 1 pJ\n",
    "bad.yaml": "pe_rows: [1, 2\n",
    "negmem.yaml": NPU.replace("4 GiB", "-1 GiB"), "nanmem.yaml": NPU.replace("4 GiB", "nan GiB"),
    "hugemem.yaml": NPU.replace("4 GiB", "1e30 GiB"), "unk.yaml": NPU + "foo: 1\n",
    "prec3.yaml": NPU + "precision_bits: 3\n",
    "t_nan.csv": "time_s,prompt,output\nnan,8,4\n", "t_inf.csv": "time_s,prompt,output\ninf,8,4\n",
    "t_huge.csv": "time_s,prompt,output\n0,1e30,4\n", "t_neg.csv": "time_s,prompt,output\n0,8,-4\n",
    "t_far.csv": "time_s,prompt,output\n0,8,4\n1e300,8,4\n",
})
_SW = "kind: llm-serve\nname: x\nfixed:\n  model: {m}\n  duration: 1s\n  qps: 50\n{extra}"
FILES.update({
    "sw_nan.yaml": _SW.format(m="llm-tiny", extra="axes:\n  seed: [.nan]\n"),
    "sw_dup.yaml": _SW.format(m="llm-tiny:kv=int8:kv=fp16", extra="axes:\n  seed: [0]\n"),
    "sw_unk.yaml": _SW.format(m="llm-tiny", extra="  bogus: 3\naxes:\n  seed: [0]\n"),
    "sw_bad.yaml": "kind: llm-serve\nname: x\nfixed: [\n",
    "sw_len.yaml": _SW.format(m="llm-tiny", extra="  prompt_len: lognormal:mean=1e300,sigma=1\n"
                              "axes:\n  seed: [0]\n"),
    "sw_energy.yaml": _SW.format(m="llm-tiny", extra="axes:\n  npu.energy.mac_pj: ['1 pJ']\n"),
    "sw_profile_llm.yaml": "kind: profile\nname: x\naxes:\n  models: ['llama-3-8b:phase=decode']\n",
})

# run configs (serve --config) naming an LLM
_RUN = "models: llm-tiny\nnpu: tpuv5e-like\nqps: '20'\nduration: 0.2s\n"
FILES.update({"c_bad.yaml": "models: [llm-tiny\n", "c_unk.yaml": _RUN + "bogus: 1\n",
              "c_dup.yaml": _RUN + "models: llm-tiny\n", "c_nan.yaml": _RUN.replace("'20'", ".nan"),
              "c_len.yaml": _RUN + "prompt-len: lognormal:mean=1e300,sigma=1\n",
              "c_sched.yaml": _RUN + "scheduler: p-prema\n"})

S = ("serve", "--models", "llm-tiny", "--npu", "tpuv5e-like", "--qps", "20", "--duration", "0.2s")
T = ("serve", "--models", "llm-tiny", "--npu", "tpuv5e-like")
C = ("capacity", "--models", "llm-tiny", "--npu", "tpuv5e-like", "--llm-scheduler", "vllm",
     "--slo", "ttft=1s,tbt=100ms:p99", "--probe-duration", "0.2s")
P = ("profile", "llama-3-8b:phase=decode:batch=2:context=64", "--npu", "tpuv5e-like", "--quiet")


def _s(flag: str, value: str) -> tuple[str, ...]:
    """``S`` with ``flag`` set to ``value`` (replacing it when ``S`` has it)."""
    out = list(S)
    if flag in out:
        out[out.index(flag) + 1] = value
        return tuple(out)
    return (*S, flag, value)


CASES: dict[str, tuple[tuple[str, ...], str]] = {
    # numbers: NaN, infinite, negative, huge, zero
    "qps_nan": (_s("--qps", "nan"), "qps"), "qps_inf": (_s("--qps", "inf"), "qps"),
    "qps_1e400": (_s("--qps", "1e400"), "qps"), "qps_zero": (_s("--qps", "0"), "qps"),
    "duration_neg": (_s("--duration", "-1s"), "--duration"),
    "duration_nan": (_s("--duration", "nans"), "--duration"),
    "duration_huge": (_s("--duration", "1e12s"), "--duration"),
    "duration_bare": (_s("--duration", "5"), "--duration"),
    "prompt_mean_nan": (_s("--prompt-len", "lognormal:mean=nan,sigma=1"), "--prompt-len"),
    "prompt_mean_inf": (_s("--prompt-len", "lognormal:mean=inf,sigma=1"), "--prompt-len"),
    # was: IndexError traceback (a lognormal draw past int64 wrapped to a negative length)
    "prompt_mean_1e300": (_s("--prompt-len", "lognormal:mean=1e300,sigma=1"), "--prompt-len"),
    # was: exit 0, every output clamped
    "output_mean_1e300": (_s("--output-len", "lognormal:mean=1e300,sigma=1"), "--output-len"),
    "prompt_hi_1e30": (_s("--prompt-len", "uniform:lo=1,hi=1e30"), "--prompt-len"),
    "prompt_lo_gt_hi": (_s("--prompt-len", "uniform:lo=5,hi=3"), "--prompt-len"),
    "prompt_fixed_1e30": (_s("--prompt-len", "fixed:1e30"), "--prompt-len"),
    "prompt_extra_key": (_s("--prompt-len", "fixed:5,extra=3"), "--prompt-len"),
    "prompt_sigma_nan": (_s("--prompt-len", "lognormal:mean=500,sigma=nan"), "--prompt-len"),
    "prompt_kind": (_s("--prompt-len", "gauss:mean=5"), "--prompt-len"),
    "prompt_empty": (_s("--prompt-len", ""), "--prompt-len"),
    "slo_neg": (_s("--slo", "ttft=-1s"), "--slo ttft"),
    "slo_p0": (_s("--slo", "ttft=1s:p0"), "--slo ttft"),
    "slo_p101": (_s("--slo", "ttft=1s:p101"), "--slo ttft"),
    "slo_pnan": (_s("--slo", "ttft=1s:pnan"), "--slo ttft"),
    "slo_two_pct": (_s("--slo", "ttft=1s:p99:p50"), "--slo ttft"),
    "slo_nan": (_s("--slo", "tbt=nans"), "--slo tbt"),
    # was: exit 0 with an infinite bound, i.e. no SLO at all
    "slo_huge": (_s("--slo", "ttft=1e400s"), "--slo ttft"),
    "slo_bare": (_s("--slo", "ttft=1"), "--slo ttft"),
    "slo_key": (_s("--slo", "foo=1s"), "--slo"),
    "slo_empty_item": (_s("--slo", "ttft=1s,,tbt=1s"), "--slo"),
    "max_tokens_neg": (_s("--max-tokens", "-1"), "max_tokens"),
    "max_tokens_huge": (_s("--max-tokens", "99999999999"), "max_tokens"),
    "chunk_huge": (_s("--llm-scheduler", "sarathi:chunk=1e9"), "chunk"),
    "chunk_neg": (_s("--llm-scheduler", "sarathi:chunk=-1"), "chunk"),
    "chunk_word": (_s("--llm-scheduler", "sarathi:chunk=abc"), "chunk"),
    "disagg_zero": (_s("--llm-scheduler", "disagg:0+1"), "--llm-scheduler"),
    "disagg_huge": (_s("--llm-scheduler", "disagg:1000000+1"), "--llm-scheduler"),
    "kv_preempt_bogus": (_s("--kv-preempt", "bogus"), "--kv-preempt"),
    "seed_neg": (_s("--seed", "-1"), "--seed"), "seed_huge": (_s("--seed", "1" + "0" * 30), "--seed"),
    # model specs
    "weights_int3": (_s("--models", "llm-tiny:weights=int3"), "int3"),
    "kv_fp64": (_s("--models", "llm-tiny:kv=fp64"), "fp64"),
    "model_unknown_key": (_s("--models", "llm-tiny:foo=1"), "foo"),
    "model_no_eq": (_s("--models", "llm-tiny:kv"), "key=value"),
    # was: "--qps: 1 values for 2 models", about the wrong thing
    "two_llms": (_s("--models", "llm-tiny,llm-tiny"), "one LLM at a time"),
    "llm_beside_cnn": (("serve", "--models", "resnet50,llm-tiny", "--qps", "5,5"),
                       "one LLM at a time"),
    "model_upper": (_s("--models", "LLM-TINY"), "LLM-TINY"),
    # NPU files
    "npu_missing": (_s("--npu", "nope.yaml"), "nope.yaml"),
    "npu_malformed": (_s("--npu", "bad.yaml"), "bad.yaml"),
    "npu_negmem": (_s("--npu", "negmem.yaml"), "global_mem_bytes"),
    "npu_nanmem": (_s("--npu", "nanmem.yaml"), "global_mem_bytes"),
    # was: exit 0 with 6.5e34 KV blocks
    "npu_hugemem": (_s("--npu", "hugemem.yaml"), "global_mem_bytes"),
    "npu_unknown_key": (_s("--npu", "unk.yaml"), "'foo'"),
    "npu_precision_3": (_s("--npu", "prec3.yaml"), "weights"),
    "npu_devnull": (_s("--npu", "/dev/null"), "/dev/null"),
    # outputs: directories, devices, /proc, one path twice, suffixes
    "json_dir": (_s("--json", "adir"), "--json"), "csv_dir": (_s("--csv", "adir"), "--csv"),
    "trace_dir": (_s("--trace", "adir"), "--trace"),
    "json_devnull": (_s("--json", "/dev/null"), "--json"),
    "json_proc": (_s("--json", "/proc/x.json"), "--json"),
    "timeline_suffix": (_s("--timeline", "t.xyz"), "--timeline"),
    "json_csv_same": ((*_s("--json", "o.out"), "--csv", "o.out"), "o.out"),
    "per_request": (_s("--per-request", "r.csv"), "--per-request"),
    "bad_input_missing_dir": ((*_s("--qps", "nan"), "--json", "no/dir/o.json"), "qps"),
    # request traces
    "trace_missing": ((*T, "--arrivals", "trace:nope.csv"), "nope.csv"),
    "trace_is_dir": ((*T, "--arrivals", "trace:adir"), "adir"),
    "trace_devnull": ((*T, "--arrivals", "trace:/dev/null"), "/dev/null"),
    "trace_with_qps": (_s("--arrivals", "trace:t_nan.csv"), "--qps"),
    "trace_time_nan": ((*T, "--arrivals", "trace:t_nan.csv"), "trace request 0"),
    "trace_time_inf": ((*T, "--arrivals", "trace:t_inf.csv"), "trace request 0"),
    # was: exit 0, a run of 1e300 s
    "trace_time_1e300": ((*T, "--arrivals", "trace:t_far.csv"), "trace request 1"),
    "trace_len_1e30": ((*T, "--arrivals", "trace:t_huge.csv"), "t_huge.csv"),
    "trace_len_neg": ((*T, "--arrivals", "trace:t_neg.csv"), "trace request 0"),
    # capacity
    "cap_probe_neg": ((*C, "--probe-duration", "-5s"), "--duration"),
    "cap_probe_nan": ((*C, "--probe-duration", "nans"), "--duration"),
    "cap_probe_huge": ((*C, "--probe-duration", "1e9s"), "--duration"),
    "cap_probe_1ms": ((*C, "--probe-duration", "1ms"), "--probe-duration"),
    "cap_start_tiny": ((*C, "--start-qps", "1e-300"), "--start-qps"),
    "cap_start_zero": ((*C, "--start-qps", "0"), "qps"),
    "cap_start_neg": ((*C, "--start-qps", "-1"), "qps"),
    "cap_start_nan": ((*C, "--start-qps", "nan"), "qps"),
    "cap_start_inf": ((*C, "--start-qps", "inf"), "qps"),
    "cap_start_1e300": ((*C, "--start-qps", "1e300"), "over the limit"),
    "cap_json_dir": ((*C, "--json", "adir"), "--json"),
    # was: exit 0; the LLM search ignored every layer-wise option (no --csv file written)
    "cap_csv": ((*C, "--csv", "c.csv"), "--csv"), "cap_seeds": ((*C, "--seeds", "1,2"), "--seeds"),
    "cap_requests": ((*C, "--requests", "100"), "--requests"),
    "cap_no_failsafe": ((*C, "--no-failsafe"), "--failsafe"),
    "cap_windows": ((*C, "--windows", "0,1ms"), "--windows"),
    "cap_ratio": ((*C, "--ratio", "1:1"), "--ratio"),
    # profile of LLM phases
    "profile_batch_float": (("profile", "llama-3-8b:phase=decode:batch=1e9", "--npu",
                             "tpuv5e-like"), "batch"),
    "profile_context_neg": (("profile", "llama-3-8b:phase=decode:context=-5", "--npu",
                             "tpuv5e-like"), "context"),
    "profile_tokens_nan": (("profile", "llama-3-8b:tokens=nan", "--npu", "tpuv5e-like"),
                           "tokens"),
    "profile_weights_int3": (("profile", "llama-3-8b:weights=int3", "--npu", "tpuv5e-like"),
                             "int3"),
    "profile_batch_flag": ((*P, "--batch", "4"), "batch"),
    "profile_json_dir": ((*P, "--json", "adir"), "--json"),
    "profile_csv_dir": ((*P, "--csv", "adir"), "--csv"),
    "profile_parquet_devnull": ((*P, "--parquet", "/dev/null"), "--parquet"),
    "profile_llm_energy_neg": (("profile", "llm-tiny:phase=decode", "--npu", "e_neg.yaml"),
                               "energy.mac_pj"),
    # reproductions
    "sarathi_duration_neg": (("reproduce", "sarathi", "--duration", "-1s"), "--duration"),
    "sarathi_duration_huge": (("reproduce", "sarathi", "--duration", "1e9s"), "--duration"),
    "sarathi_json_dir": (("reproduce", "sarathi", "--json", "adir"), "--json"),
    # was: "no request arrives ... raise --qps or --duration", options reproduce has not
    "sarathi_duration_short": (("reproduce", "sarathi", "--duration", "1s"), "--duration"),
    "sarathi_seed_neg": (("reproduce", "sarathi", "--duration", "1s", "--seed", "-1"), "seed"),
    "energy_repro_json_dir": (("reproduce", "scalesim-v3-energy", "--json", "adir"), "--json"),
    "energy_repro_json_devnull": (("reproduce", "scalesim-v3-energy", "--json", "/dev/null"),
                                  "--json"),
    # sweeps of kind llm-serve
    "sweep_nan": (("sweep", "sw_nan.yaml", "--out", "r.csv"), "seed"),
    "sweep_key_twice": (("sweep", "sw_dup.yaml", "--out", "r.csv"), "given twice"),
    "sweep_unknown": (("sweep", "sw_unk.yaml", "--out", "r.csv"), "bogus"),
    "sweep_malformed": (("sweep", "sw_bad.yaml", "--out", "r.csv"), "sw_bad.yaml"),
    "sweep_length_1e300": (("sweep", "sw_len.yaml", "--out", "r.csv"), "prompt_len"),
    # was: exit 0, an axis that changed nothing (LLM serving reports no energy)
    "sweep_energy_axis": (("sweep", "sw_energy.yaml", "--out", "r.csv"), "npu.energy.mac_pj"),
    "sweep_profile_llm": (("sweep", "sw_profile_llm.yaml", "--out", "r.csv"), "llama-3-8b"),
}
CASES.update({
    "config_malformed": (("serve", "--config", "c_bad.yaml"), "c_bad.yaml"),
    "config_unknown": (("serve", "--config", "c_unk.yaml"), "bogus"),
    "config_key_twice": (("serve", "--config", "c_dup.yaml"), "models"),
    "config_qps_nan": (("serve", "--config", "c_nan.yaml"), "qps"),
    "config_length_1e300": (("serve", "--config", "c_len.yaml"), "--prompt-len"),
    "config_layerwise_option": (("serve", "--config", "c_sched.yaml"), "--scheduler"),
    "config_save_dir": ((*S, "--save-config", "adir"), "--save-config"),
})
# every energy field problem, through profile and serve
CASES.update({f"energy_{name[2:-5]}": (("profile", "resnet50", "--npu", name, "--quiet"),
                                       name) for name in FILES if name.startswith("e_")})
CASES["energy_serve_neg"] = (("serve", "--models", "resnet50", "--npu", "e_neg.yaml", "--qps",
                              "50", "--duration", "20ms"), "energy.mac_pj")


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_error_line_before_any_work(case, tmp_path, monkeypatch, capsys):
    argv, needle = CASES[case]
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "adir").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "160")
    before = set(os.listdir(tmp_path))
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:"), err
    assert needle in lines[0], lines[0]
    assert set(os.listdir(tmp_path)) == before  # nothing written, no folder made
    assert not list((tmp_path / "adir").iterdir())


def test_lognormal_tail_never_wraps():
    """A length distribution built in Python with a far tail: draws stay in [1, MAX_TOKENS]
    (before, ``rint(inf).astype(int64)`` wrapped to a negative length)."""
    from npuweave.sim.llm.serve import Lengths
    from npuweave.workload.llm import MAX_TOKENS

    draws = Lengths("lognormal", 1e300, 1.0).sample(np.random.default_rng(0), 1000)
    assert draws.min() >= 1 and draws.max() == MAX_TOKENS
