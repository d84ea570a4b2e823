"""Every bash example in README.md runs as written, each in its own empty directory.

One test per fenced ```bash block, so a broken example names its section. A block that cannot
run here (it installs from a source checkout, or takes minutes) is marked by an HTML comment on
the line right before it, with the reason::

    <!-- readme-test: skip (takes about 2 minutes) -->

``npuweave`` and ``python`` in the examples run this checkout (through small shims on PATH),
never an installed copy elsewhere.

A block whose text says Layerweaver interleaves is marked so the claim is checked on the files
it writes (a Perfetto trace ``.json`` or a sweep ``.csv``)::

    <!-- readme-test: interleaves out.json results.csv -->
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TIMEOUT_S = 300
_FENCE = re.compile(r"^```bash[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
_SKIP = re.compile(r"<!--\s*readme-test:\s*skip\b(.*?)-->", re.S)
_INTERLEAVES = re.compile(r"<!--\s*readme-test:\s*interleaves\s+(.*?)-->", re.S)
# "Layerweaver interleaves": one model's DRAM fetches run while another model computes for at
# least this share of the run (the failsafe, one request at a time, overlaps ~0-7%: only the
# next request's first fetch under the previous one's last layers)
MIN_CROSS_OVERLAP = 0.15


@dataclass(frozen=True)
class Block:
    id: str
    line: int
    code: str
    skip: str | None  # the reason, when marked
    interleaves: tuple[str, ...] = ()  # files that must show Layerweaver interleaving


def readme_blocks(text: str) -> list[Block]:
    """The bash blocks of a README, with their section and skip marker."""
    blocks: list[Block] = []
    counts: dict[str, int] = {}
    for m in _FENCE.finditer(text):
        head = text[: m.start()]
        before = head.rstrip().splitlines()
        marker = _SKIP.search(before[-1]) if before else None
        check = _INTERLEAVES.search(before[-1]) if before else None
        prose = re.sub(r"^```.*?^```[ \t]*$", "", head, flags=re.S | re.M)  # not comments
        headings = re.findall(r"^#+\s+(.+)$", prose, re.M)
        section = re.sub(r"[^a-z0-9]+", "-", (headings[-1] if headings else "top").lower())
        section = section.strip("-")
        counts[section] = counts.get(section, 0) + 1
        reason = None
        if marker:
            reason = marker.group(1).strip().strip("()").strip() or ""
        blocks.append(Block(f"{section}-{counts[section]}", head.count("\n") + 1,
                            m.group(1), reason, tuple(check.group(1).split()) if check else ()))
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def test_parser_finds_blocks_and_markers():
    text = ("# T\n```bash\necho a\n```\n## Two words\n<!-- readme-test: skip (slow) -->\n"
            "```bash\nsleep 99\n```\n```python\nx = 1\n```\n"
            "<!-- readme-test: interleaves a.json b.csv -->\n```bash\ntrue\n```\n")
    blocks = readme_blocks(text)
    assert [(b.id, b.skip, b.code, b.interleaves) for b in blocks] == [
        ("t-1", None, "echo a\n", ()), ("two-words-1", "slow", "sleep 99\n", ()),
        ("two-words-2", None, "true\n", ("a.json", "b.csv"))]


def cross_overlap(trace: Path, process: str = "layerweaver") -> float:
    """Share of ``process``'s span in which its DRAM lane moves one model's data while its PE
    lane computes another model's layer (from a Perfetto trace npuweave wrote)."""
    data = json.loads(trace.read_text())
    events = data["traceEvents"] if isinstance(data, dict) else data
    meta = [e for e in events if e.get("ph") == "M"]
    pids = {e["pid"] for e in meta if e["name"] == "process_name" and e["args"]["name"] == process}
    lanes = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    by_lane: dict[str, list[tuple[float, float, str]]] = {"PE": [], "DRAM": []}
    for e in events:
        if e.get("ph") == "X" and e["pid"] in pids:
            by_lane[lanes[(e["pid"], e["tid"])]].append(
                (e["ts"], e["ts"] + e["dur"], e["args"]["tenant"]))
    pe, dram = sorted(by_lane["PE"]), sorted(by_lane["DRAM"])
    assert pe and dram, f"{trace}: no {process} intervals"
    span = max(b for _, b, _ in pe + dram) - min(a for a, _, _ in pe + dram)
    total, j = 0.0, 0
    for a, b, who in pe:  # each lane runs one thing at a time: a merge walk suffices
        while j < len(dram) and dram[j][1] <= a:
            j += 1
        k = j
        while k < len(dram) and dram[k][0] < b:
            if dram[k][2] != who:
                total += min(b, dram[k][1]) - max(a, dram[k][0])
            k += 1
    return total / span


def sweep_gains(path: Path) -> list[float]:
    """Layerweaver's STP over sequential's at each point of a sweep CSV with both."""
    rows = [r for r in csv.DictReader(path.open()) if r["status"] == "ok"]
    key = ("models", "npu", "batch", "cost_model", "requests", "seed")
    seq = {tuple(r[k] for k in key): float(r["stp"]) for r in rows
           if r["scheduler"] == "sequential"}
    return [float(r["stp"]) / seq[tuple(r[k] for k in key)] for r in rows
            if r["scheduler"] == "layerweaver"]


def check_interleaves(path: Path) -> None:
    """The README's claim that Layerweaver interleaves holds in the file it wrote."""
    if path.suffix == ".csv":
        gains = sweep_gains(path)
        assert gains and min(gains) >= 1 - 1e-9, f"{path.name}: Layerweaver below sequential"
        assert max(gains) >= 1.05, f"{path.name}: Layerweaver never gains 5%: {gains}"
    else:
        share = cross_overlap(path)
        assert share >= MIN_CROSS_OVERLAP, (
            f"{path.name}: Layerweaver overlaps fetches with another model's compute for "
            f"{share:.1%} of the run, under {MIN_CROSS_OVERLAP:.0%}: it did not interleave")


def _trace(path: Path, lanes: dict[str, list[tuple[float, float, str]]]) -> None:
    events: list[dict] = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0,
                           "args": {"name": "layerweaver"}}]
    for tid, (lane, spans) in enumerate(lanes.items(), start=1):
        events.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": tid,
                       "args": {"name": lane}})
        events += [{"ph": "X", "pid": 1, "tid": tid, "ts": a, "dur": b - a,
                    "args": {"tenant": t}} for a, b, t in spans]
    path.write_text(json.dumps({"traceEvents": events}))


def test_interleave_check_by_hand(tmp_path):
    # PE: A on [0, 10), B on [10, 20); DRAM: B on [2, 8) under A's compute, A on [12, 14)
    # under B's, A on [0, 2) under nothing: 6 + 2 = 8 of 20 units cross-overlap
    _trace(tmp_path / "t.json", {"PE": [(0, 10, "A"), (10, 20, "B")],
                                 "DRAM": [(0, 2, "A"), (2, 8, "B"), (12, 14, "A")]})
    assert cross_overlap(tmp_path / "t.json") == pytest.approx(0.4)
    check_interleaves(tmp_path / "t.json")
    # one model at a time (a fetch under its own compute only): 0 overlap, the check fails
    _trace(tmp_path / "s.json", {"PE": [(0, 10, "A"), (10, 20, "B")],
                                 "DRAM": [(0, 9, "A"), (10, 19, "B")]})
    with pytest.raises(AssertionError, match="did not interleave"):
        check_interleaves(tmp_path / "s.json")


def test_readme_examples_are_self_contained():
    text = README.read_text(encoding="utf-8")
    assert "../shared" not in text, "README examples must not use paths outside the package"
    assert BLOCKS, "no bash examples found"
    for block in BLOCKS:
        assert block.skip != "", f"README line {block.line}: a skip marker needs a reason"
        for name in block.interleaves:
            assert name in block.code, f"README line {block.line}: {name} is not written there"


# options and shell forms that name a file an example writes
_WRITES = (re.compile(r"(?:^|\s)(?:-o|--out|--out-dir|--csv|--json|--parquet|--timeline|--trace|"
                      r"--png|--plots|--plot|--save-config|--log)[ =](\S+)"),
           re.compile(r"(?<![0-9&])>\s*([^\s&|;]+)"),
           re.compile(r"zoo export \S+ (\S+)"))


def written_files(code: str) -> set[str]:
    """Names of the files a bash example writes (its output options and redirections)."""
    code = code.replace("\\\n", " ")
    names = {n.strip("'\"") for rx in _WRITES for n in rx.findall(code)}
    return names - {"-", "/dev/null"}


def test_examples_do_not_overwrite_one_another():
    """A reader who runs the examples one after another in one folder keeps every result."""
    assert written_files("npuweave x --csv a.csv --json - > b.txt 2>/dev/null\n"
                         "npuweave zoo export m c.onnx\n") == {"a.csv", "b.txt", "c.onnx"}
    owner: dict[str, str] = {}
    for block in BLOCKS:
        for name in written_files(block.code):
            assert owner.setdefault(name, block.id) == block.id, (
                f"README line {block.line}: {name} is also written by {owner[name]}")


def _shims(folder: Path) -> Path:
    folder.mkdir()
    for name, argv in (("npuweave", f'"{sys.executable}" -m npuweave'),
                       ("python", f'"{sys.executable}"'), ("python3", f'"{sys.executable}"')):
        shim = folder / name
        shim.write_text(f'#!/bin/sh\nexec {argv} "$@"\n')
        shim.chmod(0o755)
    return folder


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_readme_block_runs(block: Block, tmp_path):
    if block.skip:
        pytest.skip(f"README line {block.line}: {block.skip}")
    work = tmp_path / "work"
    work.mkdir()
    shims = _shims(tmp_path / "bin")
    env = {**os.environ, "PATH": f"{shims}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg", "COLUMNS": "160"}
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.code], cwd=work,
                          env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
                          stdin=subprocess.DEVNULL, check=False)
    tail = (done.stdout[-1500:] + "\n--- stderr ---\n" + done.stderr[-3000:])
    assert done.returncode == 0, f"README line {block.line} failed:\n{block.code}\n{tail}"
    assert "Traceback" not in done.stderr, tail
    for name in block.interleaves:
        check_interleaves(work / name)
