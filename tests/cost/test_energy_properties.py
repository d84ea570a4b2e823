"""Properties of energy: additive over layers, monotone in every per-access energy, gating
never costs more than no gating."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.cost import profile_model
from npuweave.hardware import preset
from npuweave.hardware.energy import EnergySpec
from npuweave.metrics.energy import busy_union, static_energy
from npuweave.workload import load_layers

LAYERS = tuple(load_layers("mobilenetv2"))
PER_ACCESS = [f.name for f in dataclasses.fields(EnergySpec)
              if f.name.endswith(("_pj", "_per_byte"))]


def _total(layers, npu, batch=1) -> float:
    energies, _ = profile_model(list(layers), npu, batch=batch).energies()
    return sum(e.total_j for e in energies)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, len(LAYERS) - 1), min_size=1, max_size=8),
       st.integers(1, 4))
def test_energy_is_additive_over_layers(picks, batch):
    npu = preset("memory-centric")
    layers = [LAYERS[i] for i in picks]
    whole = _total(layers, npu, batch)
    parts = sum(_total([layer], npu, batch) for layer in layers)
    assert abs(whole - parts) <= 1e-12 * max(1.0, abs(whole))


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(PER_ACCESS), st.floats(0.01, 100.0), st.integers(0, len(LAYERS) - 1),
       st.sampled_from(["traffic", "scalesim"]))
def test_energy_is_monotone_in_every_per_access_energy(field, delta, pick, counts):
    base = preset("prema")
    spec = dataclasses.replace(base.energy, dram_counts=counts)
    low = dataclasses.replace(base, energy=spec)
    high = dataclasses.replace(base, energy=dataclasses.replace(
        spec, **{field: getattr(spec, field) + delta}))
    layer = [LAYERS[pick]]
    assert _total(layer, high) >= _total(layer, low)


busy = st.lists(st.tuples(st.floats(0, 10), st.floats(0, 2)), max_size=12).map(
    lambda xs: busy_union((s, s + d) for s, d in xs))


@settings(max_examples=200, deadline=None)
@given(busy, st.floats(0, 5), st.floats(0, 100), st.floats(0, 1), st.floats(0, 3))
def test_gated_idle_never_costs_more_than_ungated(periods, extra, static_w, frac, wake):
    span = max((e for _, e in periods), default=0.0) + extra
    gated = static_energy(periods, span, static_w, static_w * frac, wake)
    ungated = static_energy(periods, span, static_w)
    assert gated <= ungated + 1e-9 * max(1.0, ungated)
    # and never less than the busy time at full power
    on = sum(e - s for s, e in periods)
    assert gated >= static_w * min(on, span) - 1e-9 * max(1.0, ungated)


def test_gating_saves_on_a_hand_timeline():
    # busy [1, 2] and [5, 6] over 8 s; 2 W static, 1 W of it gated, 0.5 s wake-up:
    # ungated 16 J; gated: 1 W x 8 s + 1 W x (2 s busy + 0.5 + 0.5 + 0.5 of the 3 gaps) = 11.5 J
    periods = [(1.0, 2.0), (5.0, 6.0)]
    assert static_energy(periods, 8.0, 2.0) == 16.0
    assert static_energy(periods, 8.0, 2.0, 1.0, 0.5) == 11.5
