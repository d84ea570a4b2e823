"""Hostile inputs to the serving-era commands (issue 24), one generated family per class.

Every case must end in exactly one ``error:`` line naming the option, file or field, exit 2,
before any work (no output file written, no progress line), within a time bound. Each family
failed on the code before issue 24 (a traceback, a hang, a silent exit 0 or a late error).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npuweave.cli import main

ROOT = Path(__file__).resolve().parents[2]
M = ("--models", "resnet50,bert-base")
CAP = ("capacity", *M, "--ratio", "4:1", "--deadline", "15ms,130ms")
POISSON = (*M, "--qps", "300,80", "--duration", "20ms")
OK_TRACE = b"time,model\n0.001,resnet50\n0.002,bert-base\n"


def _serve(*extra: str) -> tuple[str, ...]:
    return ("serve", *POISSON, *extra)


# class "odd numbers and fields": one parser per kind of value, with bounds
NUMBERS = {
    "priority_2_63": (_serve("--priority", "9223372036854775808,1"), "--priority"),
    "priority_5000_digits": (_serve("--priority", "1," + "9" * 5000), "--priority"),
    "qps_5000_digits": (("serve", *M, "--qps", "9" * 5000 + ",80", "--duration", "20ms"), "--qps"),
    "qps_nan": (("serve", *M, "--qps", "nan,80", "--duration", "20ms"), "--qps"),
    "qps_superscript": (("serve", *M, "--qps", "\u00b2,80", "--duration", "20ms"), "--qps"),
    "seed_negative": (_serve("--seed", "-1"), "--seed"),
    "scheduler_opt_seed": (_serve("--scheduler-opt", "seed=5"), "--seed"),
    "scheduler_opt_nan": (_serve("--scheduler", "rr", "--scheduler-opt", "quantum_s=nan"),
                          "quantum_s"),
    "rr_quantum_1ns": (_serve("--scheduler", "rr", "--scheduler-opt", "quantum_s=1e-9"),
                       "quantum_s"),
    "capacity_seeds_negative": ((*CAP, "--seeds", "-1"), "--seeds"),
    "predict_seed_negative": (("predict", "rnn-mt1", "--seed", "-1"), "--seed"),
    "prema_seed_negative": (("reproduce", "prema", "--seed", "-1"), "--seed"),
    "prema_span_nan": (("reproduce", "prema", "--span", "nan"), "--span"),
    "loadgen_mix_nan": (("loadgen", *M, "--out", "lgo", "--scenario", "SingleStream",
                         "--mix", "nan:1"), "--mix"),
    "loadgen_server_1e12": (("loadgen", "--models", "resnet50", "--out", "lgo", "--scenario",
                             "Server", "--qps", "1e12", "--target-latency", "15ms"), "--qps"),
    "mesh_1000x1000": (("compile", "multicore", "resnet50", "--npu", "gemini-like", "--mesh",
                        "1000x1000", "-o", "mc.json"), "cores"),
    "batching_window_huge": (_serve("--batching", "window:1e300s:max4"), "--batching"),
}

# class "numbers without units" (issue 25 item 2)
UNITS = {
    "duration_bare": (("serve", *M, "--qps", "300,80", "--duration", "200"), "--duration"),
    "deadline_bare": (_serve("--deadline", "15,130"), "--deadline"),
    "windows_bare": ((*CAP, "--windows", "2"), "--windows"),
    "ir_dram_bw_bare": (("compile", "multicore", "resnet50", "--npu", "gemini-like",
                         "--dram-bw", "16", "-o", "mc.json"), "--dram-bw"),
    "yaml_weight_buffer_bare": (("profile", "resnet50", "--npu", "bare.yaml"), "weight_buffer"),
    "yaml_dram_bw_bare": (("profile", "resnet50", "--npu", "bare_bw.yaml"), "dram_bw"),
}

# class "inputs silently ignored or overwritten"
IGNORED = {
    "trace_with_deadline": (("serve", *M, "--arrivals", "trace:ok.csv", "--deadline",
                             "15ms,130ms"), "--deadline"),
    "trace_with_priority": (("serve", *M, "--arrivals", "trace:ok.csv", "--priority", "1,2"),
                            "--priority"),
    "trace_with_duration": (("serve", *M, "--arrivals", "trace:ok.csv", "--duration", "5s"),
                            "--duration"),
    "trace_header_time_twice": (("serve", *M, "--arrivals", "trace:dup.csv"), "dup.csv"),
    "trace_header_time_arrival": (("serve", *M, "--arrivals", "trace:arr.csv"), "arr.csv"),
    "json_key_twice": (("serve", *M, "--arrivals", "trace:dup.json"), "given twice"),
    "preempt_vs_mechanism": (_serve("--scheduler", "prema", "--preempt", "kill",
                                    "--scheduler-opt", "mechanism=checkpoint"), "--preempt"),
}

# class "odd trace files"
TRACES = {
    "trace_superscript_priority": (b"time,model,priority\n0.001,resnet50,\xc2\xb2\n", "priority"),
    "trace_priority_1e23": (b"time,model,priority\n0.001,resnet50,1e23\n", "priority"),
    "trace_time_1e300": (b"time,model\n1e300,resnet50\n2e300,bert-base\n", "time"),
    "trace_field_200k": (b"time,model\n0.001," + b"x" * 200_000 + b"\n", "row 2"),
    "trace_binary": (bytes(range(256)) * 8, "t.csv"),
}

# class "outputs": checked together, before any work
OUTPUTS = {
    "timeline_bad_suffix": (_serve("--json", "x.json", "--timeline", "t.xyz"), "--timeline"),
    "json_trace_same": (_serve("--json", "same.json", "--trace", "same.json"), "same.json"),
    "json_csv_same": (_serve("--json", "same.json", "--csv", "same.json"), "same.json"),
    "timeline_trace_same": (_serve("--timeline", "s.png", "--trace", "s.png"), "s.png"),
    "json_unwritable": (_serve("--json", "/proc/x.json"), "--json"),
    "multicore_timeline_suffix": (("compile", "multicore", "resnet50", "--npu", "gemini-like",
                                   "-o", "mc.json", "--timeline", "t.xyz"), "--timeline"),
    "capacity_json_csv_same": ((*CAP, "--json", "a.out", "--csv", "a.out"), "a.out"),
}

# class "late or noisy errors": the whole spec validated before the first point, IR sizes read
LATE = {
    "sweep_bad_option_one_point": (("sweep", "opt.yaml"), "quantum_s"),
    "sweep_huge_load_one_point": (("sweep", "load.yaml"), "simulated events"),
    "sweep_option_seed": (("sweep", "seed.yaml"), "seed"),
    "dask_no_port": (("reproduce", "prema", "--dask", "tcp://"), "--dask"),
    "lwplus_dask_no_port": (("reproduce", "layerweaver-plus", "--dask", "tcp://"), "--dask"),
    "ir_negative_size": (("ir", "simulate", "neg.json"), "size -800"),
    "ir_huge_size": (("ir", "simulate", "huge.json"), "size 10000"),
    "ir_fifo": (("ir", "simulate", "pipe.json"), "named pipe"),
    "capacity_2000_seeds": ((*CAP, "--seeds", ",".join(map(str, range(2000)))), "--seeds"),
    "loadgen_out_unwritable": (("loadgen", "--models", "resnet50", "--out", "/proc/lgo",
                                "--scenario", "SingleStream"), "--out"),
}

# class "bounds that come too late or too high": estimated before any work
BOUNDS = {
    "serve_49M_requests": (("serve", *M, "--qps", "1e7,1e7", "--duration", "2.45s"),
                           "events"),
    "serve_trace_of_long_run": (("serve", *M, "--qps", "3000,800", "--duration", "10s",
                                 "--trace", "big.json"), "--timeline/--trace"),
}

FILES = {
    "ok.csv": OK_TRACE,
    "dup.csv": b"time,model,time\n0.001,resnet50,0.5\n",
    "arr.csv": b"time,arrival,model\n0.001,0.3,resnet50\n",
    "dup.json": b'[{"time": 0.001, "model": "resnet50", "time": 0.5}]',
    "bare.yaml": b"pe_rows: 32\npe_cols: 32\nclock_hz: 1 GHz\ndram_bw: 100 GB/s\n"
                 b"weight_buffer: 24\nact_buffer: 4 MiB\n",
    "bare_bw.yaml": b"pe_rows: 32\npe_cols: 32\nclock_hz: 1 GHz\ndram_bw: 100000\n"
                    b"weight_buffer: 4 MiB\nact_buffer: 4 MiB\n",
}

_SWEEP_SERVE = ("kind: serve\nname: x\nfixed:\n  models: resnet50,bert-base\n"
                "  duration: 20ms\n")
FILES.update({
    "opt.yaml": (_SWEEP_SERVE + "  qps: 300,80\naxes:\n  scheduler: [rr, fcfs]\n"
                 "  options: [{quantum_s: 0.001}]\n").encode(),
    "load.yaml": (_SWEEP_SERVE + "axes:\n  qps: ['300,80', '1e9,1e9']\n").encode(),
    "seed.yaml": (_SWEEP_SERVE + "  qps: 300,80\n  options: {seed: 3}\n").encode(),
})


def _ir(path: tuple, value: int) -> bytes:
    import json

    sys.path.insert(0, str(ROOT / "tests" / "gemini"))
    from irdata import tiny_ir

    data = tiny_ir()
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(data).encode()


FILES["neg.json"] = _ir(("-1", "out", 0, "size"), -800)
FILES["huge.json"] = _ir(("0", 0, "ofmap_size"), 10**30)

CASES = {**NUMBERS, **UNITS, **IGNORED, **OUTPUTS, **BOUNDS, **LATE,
         **{k: (("serve", *M, "--arrivals", "trace:t.csv"), v[1]) for k, v in TRACES.items()}}


def _run(argv: tuple[str, ...], capsys) -> tuple[int, str]:
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_error_line_before_any_work(case, tmp_path, monkeypatch, capsys):
    argv, needle = CASES[case]
    for name, data in FILES.items():
        (tmp_path / name).write_bytes(data)
    if case in TRACES:
        (tmp_path / "t.csv").write_bytes(TRACES[case][0])
    os.mkfifo(tmp_path / "pipe.json")
    monkeypatch.chdir(tmp_path)
    before = set(os.listdir(tmp_path))
    code, err = _run(argv, capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:"), err
    assert needle in lines[0]
    assert set(os.listdir(tmp_path)) == before  # nothing written: refused before the work


def test_bom_trace_is_read(tmp_path, monkeypatch, capsys):
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + OK_TRACE)
    monkeypatch.chdir(tmp_path)
    code, err = _run(("serve", *M, "--arrivals", "trace:bom.csv", "--scheduler", "fcfs",
                      "--json", "r.json"), capsys)
    assert code == 0, err
    assert '"requests": 2' in (tmp_path / "r.json").read_text()


def test_fifo_trace_does_not_block(tmp_path, monkeypatch, capsys):
    os.mkfifo(tmp_path / "f.csv")
    monkeypatch.chdir(tmp_path)
    code, err = _run(("serve", *M, "--arrivals", "trace:f.csv"), capsys)
    assert code == 2 and "named pipe" in err


def test_priority_ignored_by_policy_is_noted(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    try:
        main(["serve", *POISSON, "--scheduler", "fcfs", "--priority", "1,9"])
    except SystemExit as exc:
        assert not exc.code
    assert "fcfs does not rank requests by priority" in capsys.readouterr().out


SWEEP = "kind: profile\nname: {name}\naxes:\n  models: [ncf, alexnet]\n"


def _sweep(tmp_path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "npuweave", "sweep", *argv], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("store", ["binary", "foreign", "junk_parquet"])
def test_sweep_store_refused_untouched(tmp_path, store):
    (tmp_path / "a.yaml").write_text(SWEEP.format(name="a"))
    (tmp_path / "b.yaml").write_text(SWEEP.format(name="b").replace("alexnet", "vgg16"))
    if store == "binary":
        out = tmp_path / "r.csv"
        out.write_bytes(bytes(range(256)) * 4)
        (tmp_path / ".r.csv.sweep.json").write_text('{"fingerprint": "x"}')
    elif store == "foreign":
        out = tmp_path / "r.csv"
        assert _sweep(tmp_path, "b.yaml", "--jobs", "1", "--out", "r.csv").returncode == 0
    else:
        pytest.importorskip("pyarrow")
        out = tmp_path / "r.parquet"
        assert _sweep(tmp_path, "a.yaml", "--jobs", "1", "--out", "r.parquet").returncode == 0
        (out / "part-junk.parquet").write_bytes(b"not parquet at all")
    before = out.read_bytes() if out.is_file() else None
    done = _sweep(tmp_path, "a.yaml", "--jobs", "1", "--out", out.name, "--resume")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "--out" in lines[0] or \
        "Parquet" in lines[0]
    if before is not None:
        assert out.read_bytes() == before


def test_sigterm_ends_pool_workers(tmp_path):
    """SIGTERM to a pool sweep ends the workers with it (they used to outlive it)."""
    from npuweave.experiments import executor

    script = tmp_path / "s.py"
    script.write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from npuweave.experiments.executor import run_iter\n"
        "def slow(x):\n    time.sleep(60)\n    return x\n"
        "if __name__ == '__main__':\n"
        "    for i, r in run_iter(slow, list(range(4)), jobs=2):\n        pass\n")
    proc = subprocess.Popen([sys.executable, str(script)])
    try:
        kids: list[int] = []
        for _ in range(100):  # wait for both workers
            time.sleep(0.1)
            out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(proc.pid)],
                                 capture_output=True, text=True, check=False).stdout
            kids = [int(x) for x in out.split()]
            if len(kids) >= 2:
                break
        assert kids, "no pool workers started"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        time.sleep(0.5)
        alive = [k for k in kids if _alive(k)]
        assert not alive, f"workers {alive} outlived the sweep"
    finally:
        if proc.poll() is None:
            proc.kill()
    assert executor is not None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"
