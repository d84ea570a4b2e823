"""The reproduction's summary numbers (``headline``, ``averages``) on hand-built rows."""

import math

import pytest

from npuweave.errors import ConfigError, UnknownNameError
from npuweave.experiments import all_pairs, averages, headline, parse_pairs


def row(pair, scheduler, stp, antt=1.5, pe=0.9, dram=0.5, worst=2.0, share=0.8):
    return {"scenario": "single-batch", "pair": pair, "scheduler": scheduler, "stp": stp,
            "antt": antt, "fairness": 0.5, "pe_utilization": pe, "dram_utilization": dram,
            "makespan_ratio": 1.1, "max_slowdown": worst, "bound_share": share}


ROWS = [
    row("RN+BB", "compute-only", 1.0), row("RN+BB", "memory-only", 1.0),
    row("RN+BB", "fair", 1.0), row("RN+BB", "aimt", 1.2, antt=1.6),
    row("RN+BB", "layerweaver", 1.5, antt=1.2, pe=1.0, dram=0.8, worst=1.5, share=0.9),
    row("IC+XL", "compute-only", 1.0), row("IC+XL", "memory-only", 0.0, antt=None),
    row("IC+XL", "fair", 1.0), row("IC+XL", "aimt", 1.6, antt=1.4),
    row("IC+XL", "layerweaver", 1.6, antt=1.4, pe=0.8, dram=0.6, worst=6.0, share=0.7),
]


def test_headline_arithmetic():
    h = headline(ROWS)["single-batch"]
    # RN+BB: 1.5 / mean(1, 1, 1) = 1.5; IC+XL: memory-only ran nothing, 1.6 / mean(1, 1) = 1.6.
    assert h["stp_gain_vs_baselines"] == pytest.approx((1.5 + 1.6) / 2 - 1)
    assert h["stp_gain_vs_baselines_max"] == pytest.approx(0.6)
    # Geomean of 1.5/1.2 = 1.25 and 1.6/1.6 = 1: sqrt(1.25) - 1.
    assert h["stp_gain_vs_aimt"] == pytest.approx(math.sqrt(1.25) - 1)
    assert h["pe_utilization"] == pytest.approx(0.9)
    assert h["dram_utilization"] == pytest.approx(0.7)
    assert h["antt"] == pytest.approx(1.3)
    assert h["antt_aimt"] == pytest.approx(1.5)
    # Geomean of Layerweaver's per-pair maximum slowdowns 1.5 and 6: 3; AI-MT's 2 and 2: 2.
    assert h["max_slowdown"] == pytest.approx(3.0)
    assert h["max_slowdown_aimt"] == pytest.approx(2.0)
    assert h["bound_share"] == pytest.approx(0.8)


def test_averages_skip_undefined_values():
    mem_only = next(a for a in averages(ROWS) if a["scheduler"] == "memory-only")
    assert mem_only["stp"] == pytest.approx(0.5) and mem_only["antt"] == pytest.approx(1.5)
    assert mem_only["stp_geomean"] == 0.0
    lw = next(a for a in averages(ROWS) if a["scheduler"] == "layerweaver")
    assert lw["stp_geomean"] == pytest.approx(math.sqrt(1.5 * 1.6))


def test_pairs():
    assert len(all_pairs()) == 16 and all_pairs()[0] == ("IC", "BB")
    assert parse_pairs("rn+bb, IC+XL") == [("RN", "BB"), ("IC", "XL")]
    with pytest.raises(UnknownNameError, match="QQ"):
        parse_pairs("RN+QQ")
    with pytest.raises(ConfigError, match="RN\\+BB"):
        parse_pairs("RN")
