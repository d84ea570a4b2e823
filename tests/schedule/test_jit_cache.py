"""``jit_cache.fresh_cache``: numba's cache of every kernel goes when any kernel source changes."""

from __future__ import annotations

from pathlib import Path

from npuweave.schedule import jit_cache


def _tree(root: Path) -> tuple[Path, Path]:
    (root / "pkg" / "__pycache__").mkdir(parents=True)
    steps = root / "pkg" / "steps.py"
    steps.write_text("@kernel(inline=True)\ndef step(x):\n    return x + 1\n")
    (root / "pkg" / "notes.py").write_text("# mentions a kernel but defines none\n")
    cached = root / "pkg" / "__pycache__" / "loop.run-1.py311.nbi"
    cached.write_text("index")
    return steps, cached


def test_an_edited_kernel_source_drops_every_cached_kernel(tmp_path: Path) -> None:
    steps, cached = _tree(tmp_path)
    assert jit_cache.fresh_cache(tmp_path) and not cached.exists()  # first sight: no stamp yet
    assert (tmp_path / "__pycache__" / jit_cache.STAMP).is_file()
    cached.write_text("index")  # numba writes its cache again
    assert not jit_cache.fresh_cache(tmp_path) and cached.exists()  # nothing changed
    (tmp_path / "pkg" / "notes.py").write_text("# edited, still no kernel\n")
    assert not jit_cache.fresh_cache(tmp_path) and cached.exists()
    steps.write_text(steps.read_text().replace("x + 1", "x + 2"))  # an inlined step edited
    assert jit_cache.fresh_cache(tmp_path) and not cached.exists()


def test_an_unwritable_cache_is_left_to_numba(tmp_path: Path, monkeypatch) -> None:
    _, cached = _tree(tmp_path)

    def refuse(self: Path, *a: object, **k: object) -> None:
        raise PermissionError(self)

    monkeypatch.setattr(Path, "unlink", refuse)
    assert not jit_cache.fresh_cache(tmp_path) and cached.exists()
