"""Timestep table of a 3-layer chain, sliced and not; breadth-first LMEM ids."""

from lg_builders import add, chain, conv

from npuweave.compile.layergroup.model import BufferKind
from npuweave.compile.layergroup.span import make_span
from npuweave.compile.layergroup.tensors import analyze_layers
from npuweave.compile.layergroup.timestep import assign_timesteps, breadth_first


def _table(sliced: bool):
    view = analyze_layers(chain(3))
    span = make_span(view, 0, 2)
    acts = {"@input": 100, "c0": 100, "c1": 100, "c2": 100}
    weights = {0: 10, 1: 10, 2: 10}
    scratch = {0: 5, 1: 5, 2: 5}
    bufs = assign_timesteps(view, span, acts, weights, scratch, sliced)
    return {b.name: (b.id, b.start, b.end, b.uses) for b in bufs}, span


def test_three_layer_chain_unsliced():
    table, span = _table(sliced=False)
    assert span.timesteps == 5  # step 0 prologue, steps 1..3 compute c0..c2, step 4 epilogue
    assert table == {
        "@input": (0, 0, 1, (1,)),         # loaded during step 0, read at step 1
        "c0.weight": (1, 0, 1, (1,)),      # loaded during the step before its compute
        "c0": (2, 1, 2, (1, 2)),           # written at 1, last read by c1 at 2
        "c0.scratch": (3, 1, 1, (1,)),
        "c1.weight": (4, 1, 2, (2,)),
        "c1": (5, 2, 3, (2, 3)),
        "c1.scratch": (6, 2, 2, (2,)),
        "c2.weight": (7, 2, 3, (3,)),
        "c2": (8, 3, 4, (3,)),             # a group output: stored during step 4
        "c2.scratch": (9, 3, 3, (3,)),
    }


def test_three_layer_chain_sliced_keeps_weights():
    table, _ = _table(sliced=True)
    for name in ("c0.weight", "c1.weight", "c2.weight"):
        assert table[name][1:3] == (0, 4)  # resident for the whole repeated program
    assert table["c1"][1:3] == (2, 3)       # activations unchanged


def test_ids_breadth_first_and_shortcut_lifetime():
    # x -> a -> b ; add(a, b) -> out. Depths: a 0, b 1, add 2.
    layers = [conv("a", ("",), 4, 8, 4), conv("b", ("a",), 4, 8, 4),
              add("s", ("a", "b"), 4, 8)]
    view = analyze_layers(layers)
    span = make_span(view, 0, 2)
    assert breadth_first(view, span) == [0, 1, 2]
    acts = {"@input": 64, "a": 64, "b": 64, "s": 64}
    bufs = assign_timesteps(view, span, acts, {0: 8, 1: 8, 2: 0}, {}, False)
    by = {b.name: b for b in bufs}
    assert [b.name for b in bufs] == ["@input", "a.weight", "a", "b.weight", "b", "s"]
    assert (by["a"].start, by["a"].end) == (1, 3)   # the shortcut lives until the add
    assert by["s"].kind is BufferKind.ACTIVATION and (by["s"].start, by["s"].end) == (3, 4)


def test_escaping_tensor_is_stored_and_group_inputs_listed():
    layers = chain(4)
    view = analyze_layers(layers)
    span = make_span(view, 1, 2)
    assert span.inputs == ("c0",) and span.outputs == ("c2",)
