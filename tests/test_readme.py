"""Every bash example in README.md runs as written, each in its own empty directory.

One test per fenced ```bash block, so a broken example names its section. A block that cannot
run here (it installs from a source checkout, or takes minutes) is marked by an HTML comment on
the line right before it, with the reason::

    <!-- readme-test: skip (takes about 2 minutes) -->

``npuweave`` and ``python`` in the examples run this checkout (through small shims on PATH),
never an installed copy elsewhere.
"""

from __future__ import annotations

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


@dataclass(frozen=True)
class Block:
    id: str
    line: int
    code: str
    skip: str | None  # the reason, when marked


def readme_blocks(text: str) -> list[Block]:
    """The bash blocks of a README, with their section and skip marker."""
    blocks: list[Block] = []
    counts: dict[str, int] = {}
    for m in _FENCE.finditer(text):
        head = text[: m.start()]
        before = head.rstrip().splitlines()
        marker = _SKIP.search(before[-1]) if before else None
        headings = re.findall(r"^#+\s+(.+)$", head, re.M)
        section = re.sub(r"[^a-z0-9]+", "-", (headings[-1] if headings else "top").lower())
        section = section.strip("-")
        counts[section] = counts.get(section, 0) + 1
        reason = None
        if marker:
            reason = marker.group(1).strip().strip("()").strip() or ""
        blocks.append(Block(f"{section}-{counts[section]}", head.count("\n") + 1,
                            m.group(1), reason))
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def test_parser_finds_blocks_and_markers():
    text = ("# T\n```bash\necho a\n```\n## Two words\n<!-- readme-test: skip (slow) -->\n"
            "```bash\nsleep 99\n```\n```python\nx = 1\n```\n")
    blocks = readme_blocks(text)
    assert [(b.id, b.skip, b.code) for b in blocks] == [
        ("t-1", None, "echo a\n"), ("two-words-1", "slow", "sleep 99\n")]


def test_readme_examples_are_self_contained():
    text = README.read_text(encoding="utf-8")
    assert "../shared" not in text, "README examples must not use paths outside the package"
    assert BLOCKS, "no bash examples found"
    for block in BLOCKS:
        assert block.skip != "", f"README line {block.line}: a skip marker needs a reason"


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
