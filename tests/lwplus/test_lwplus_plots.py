"""Figure V.5's plot hides nothing: no blank panels, one y-scale, a labelled ratio axis, the
confidence bracket of each capacity and the first failing load where it lies below it."""

from __future__ import annotations

import math

import numpy as np

from npuweave.report.lwplus_plots import fig5_figure, plot_fig5


def _row(pair: str, ratio: str, scheduler: str, qps: float, first_failed: float,
         sure: float = math.nan, fail_sure: float = math.inf) -> dict:
    return {"figure": "V.5", "pair": pair, "ratio": ratio, "scheduler": scheduler, "qps": qps,
            "first_failed_qps": first_failed, "qps_sure": sure, "qps_fail_sure": fail_sure}


ROWS = [_row("RN+BB", r, "baseline", 1000.0, 1030.0, 900.0, 1100.0) for r in ("1:1", "4:1")] + [
    _row("RN+BB", "1:1", "lwplus-approx", 2000.0, 700.0, 1800.0, 2200.0),  # a valley
    _row("RN+BB", "4:1", "lwplus-approx", 1500.0, 1545.0),
]


def test_one_pair_is_one_panel_with_labelled_axes() -> None:
    fig = fig5_figure(ROWS)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 1  # not one panel in a canvas three wide
    ax = visible[0]
    w, h = fig.get_size_inches()
    assert w < 1.5 * h
    assert "RN:BB" in ax.get_xlabel() and "vision:NLP" in ax.get_xlabel()
    assert "baseline" in ax.get_ylabel()


def test_valley_and_confidence_are_drawn() -> None:
    ax = fig5_figure(ROWS).axes[0]
    ys = np.concatenate([ln.get_ydata() for ln in ax.lines if ln.get_marker() == "v"
                         and len(ln.get_xdata())])
    assert np.allclose(ys, [0.7])  # 700 / 1000: the first failing load below the capacity
    # error bars: lwplus-approx at 1:1 spans 1.8x to 2.2x the baseline
    segs = [s for c in ax.collections for s in c.get_segments()]
    spans = {(round(float(s[0][1]), 3), round(float(s[1][1]), 3)) for s in segs}
    assert (1.8, 2.2) in spans


def test_panels_share_one_y_scale(tmp_path) -> None:
    rows = ROWS + [_row("MN+BL", "1:1", "baseline", 100.0, 103.0),
                   _row("MN+BL", "1:1", "lwplus-approx", 500.0, 515.0)]
    fig = fig5_figure(rows)
    a, b = [ax for ax in fig.axes if ax.get_visible()]
    assert a.get_ylim() == b.get_ylim()
    plot_fig5(rows, tmp_path / "fig5.png")
    assert (tmp_path / "fig5.png").stat().st_size > 1000
