"""Sweep specs: ``experiment.yaml`` -> validation (every problem at once) -> frozen points.

A sweep names a *kind* of run (the command that runs one point), the settings every point
shares (``fixed``) and the settings that vary (``axes``, crossed as a product or zipped), or an
explicit list of ``points``. Each point is a frozen, hashable ``Point``; its ``point_id`` is a
hash of its settings, so a resumed sweep recognizes the points it already has.

Examples
--------
>>> spec = sweep_from_dict({"kind": "schedule", "fixed": {"models": "RN,BB"},
...                         "axes": {"scheduler": ["sequential", "layerweaver"],
...                                  "batch": [1, 4]}})
>>> len(spec.points), spec.axis_names
(4, ('scheduler', 'batch'))
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npuweave.errors import ConfigError
from npuweave.experiments.sweep.kinds import KINDS, check_params

#: More points than this is almost certainly a typo (a product of long axes); raise with
#: ``max_points`` in the spec.
MAX_POINTS = 1_000_000
_TOP_KEYS = {"kind", "fixed", "axes", "mode", "points", "name", "max_points"}


@dataclass(frozen=True, slots=True)
class Point:
    """One run of a sweep: its kind and its settings, as sorted ``(key, value)`` pairs."""

    kind: str
    params: tuple[tuple[str, Any], ...]

    @property
    def point_id(self) -> str:
        """A stable 16-hex-digit hash of the kind and the settings."""
        text = repr((self.kind, self.params))
        return hashlib.sha1(text.encode()).hexdigest()[:16]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.params)


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """A validated sweep: its kind, name, the axes that vary, and every point in order."""

    kind: str
    name: str
    axis_names: tuple[str, ...]
    param_names: tuple[str, ...]
    points: tuple[Point, ...]


def _freeze(value: Any) -> Any:
    """Lists -> tuples, dicts -> sorted item tuples, so a point is hashable."""
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    return value


def _expand(axes: dict[str, list[Any]], mode: str) -> list[dict[str, Any]]:
    names = list(axes)
    if not names:
        return [{}]
    if mode == "zip":
        return [dict(zip(names, vals)) for vals in zip(*axes.values())]
    return [dict(zip(names, vals)) for vals in itertools.product(*axes.values())]


def _check_top(raw: dict[str, Any], problems: list[str]) -> tuple[str, str]:
    for key in sorted(set(raw) - _TOP_KEYS):
        problems.append(f"unknown key {key!r} (valid: {', '.join(sorted(_TOP_KEYS))})")
    kind = raw.get("kind", "schedule")
    if kind not in KINDS:
        problems.append(f"field 'kind': unknown kind {kind!r}; choose one of: "
                        + ", ".join(sorted(KINDS)))
    mode = raw.get("mode", "product")
    if mode not in ("product", "zip"):
        problems.append(f"field 'mode': must be 'product' or 'zip', got {mode!r}")
    return kind, mode


def _check_axes(raw: dict[str, Any], mode: str, problems: list[str]) -> dict[str, list[Any]]:
    axes = raw.get("axes") or {}
    if not isinstance(axes, dict):
        problems.append("field 'axes': must be a mapping of setting -> list of values")
        return {}
    out: dict[str, list[Any]] = {}
    for name, values in axes.items():
        if not isinstance(values, list) or not values:
            problems.append(f"field 'axes.{name}': must be a non-empty list, got {values!r}")
            continue
        out[str(name)] = values
    if mode == "zip" and len({len(v) for v in out.values()}) > 1:
        lens = ", ".join(f"{k}={len(v)}" for k, v in out.items())
        problems.append(f"field 'axes': mode 'zip' needs lists of one length, got {lens}")
    return out


def _raw_points(raw: dict[str, Any], problems: list[str]) -> list[dict[str, Any]]:
    pts = raw.get("points") or []
    if not isinstance(pts, list) or not all(isinstance(p, dict) for p in pts):
        problems.append("field 'points': must be a list of mappings (setting: value)")
        return []
    return pts


def _count(axes: dict[str, list[Any]], mode: str, extra: int) -> int:
    if not axes:
        return 1 + extra if extra == 0 else extra
    sizes = [len(v) for v in axes.values()]
    n = min(sizes) if mode == "zip" else 1
    if mode != "zip":
        for s in sizes:
            n *= s
    return n + extra


def sweep_from_dict(raw: Any, source: str = "<dict>") -> SweepSpec:
    """Validate a parsed sweep spec and expand it into points; raise once with every problem."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: a sweep spec must be a mapping with 'kind', 'fixed' and "
                          "'axes' (or 'points'); see 'npuweave sweep --help'")
    problems: list[str] = []
    kind, mode = _check_top(raw, problems)
    fixed = raw.get("fixed") or {}
    if not isinstance(fixed, dict):
        problems.append("field 'fixed': must be a mapping of setting -> value")
        fixed = {}
    axes = _check_axes(raw, mode, problems)
    extra = _raw_points(raw, problems)
    limit = raw.get("max_points", MAX_POINTS)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        problems.append(f"field 'max_points': must be an integer >= 1, got {limit!r}")
        limit = MAX_POINTS
    if kind in KINDS:
        _check_settings(kind, fixed, axes, extra, problems)
    total = _count(axes, mode, len(extra))
    if total > limit:
        problems.append(f"the sweep has {total:,} points, over the limit of {limit:,}; "
                        "shorten the axes or raise 'max_points'")
    if problems:
        raise ConfigError(f"{source}: invalid sweep spec: "
                          + "; ".join(dict.fromkeys(problems)))
    combos = ([{**fixed, **c} for c in _expand(axes, mode)] if axes or not extra else [])
    combos += [{**fixed, **p} for p in extra]
    points = tuple(Point(kind, tuple(sorted((k, _freeze(v)) for k, v in
                                            KINDS[kind].normalize(c).items())))
                   for c in combos)
    names = sorted({k for p in points for k, _ in p.params})
    return SweepSpec(kind, str(raw.get("name", source)), tuple(axes), tuple(names),
                     tuple(dict.fromkeys(points)))


def _check_settings(kind: str, fixed: dict[str, Any], axes: dict[str, list[Any]],
                    extra: list[dict[str, Any]], problems: list[str]) -> None:
    """Each distinct value once (fixed, every axis value, every listed point), and the
    required settings of every point."""
    check_params(kind, fixed, "fixed", problems, required=False)
    for name, values in axes.items():
        for v in values:
            check_params(kind, {name: v}, f"axes.{name}", problems, required=False)
    for i, p in enumerate(extra, 1):
        check_params(kind, {**fixed, **p}, f"points[{i}]", problems)
    if axes or not extra:
        have = set(fixed) | set(axes)
        problems.extend(f"missing setting {k!r} (put it in 'fixed' or 'axes')"
                        for k in KINDS[kind].required if k not in have)
    combo = KINDS[kind].combo  # it may read every required setting: only once all are there
    if not problems and _count(axes, "product", len(extra)) <= 100_000:
        grid = _expand(axes, "product") if axes or not extra else []  # as the points are made
        for c in [*grid, *extra]:
            msg = combo({**fixed, **c})
            if msg:
                problems.append(msg)
                break


def load_sweep(path: str | Path) -> SweepSpec:
    """Read ``experiment.yaml`` and validate it (see ``sweep_from_dict``)."""
    from npuweave.experiments.sweep.yamlsafe import read_yaml

    return sweep_from_dict(read_yaml(path), str(path))
