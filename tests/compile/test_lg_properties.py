"""Property tests over random conv/pool/add chains: allocation and slicing invariants."""

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from lg_builders import add, conv, out_size, pool, toy_npu
from lg_checks import check_buffers, check_slices

from npuweave.compile.layergroup import GroupStatus, compile_groups
from npuweave.compile.layergroup.tensors import analyze_layers
from npuweave.errors import InfeasibleError


@st.composite
def models(draw):
    c, h = draw(st.sampled_from([2, 4, 8])), draw(st.integers(6, 28))
    shapes, layers, prev = {"": (c, h)}, [], ""
    for i in range(draw(st.integers(1, 6))):
        name, (cin, hin) = f"l{i}", shapes[prev]
        kind = draw(st.sampled_from(["conv", "conv", "pool", "add"]))
        twins = [t for t, s in shapes.items() if t not in ("", prev) and s == (cin, hin)]
        if kind == "add" and twins:
            layers.append(add(name, (prev, draw(st.sampled_from(twins))), cin, hin))
            shapes[name] = (cin, hin)
        elif kind == "pool" and hin >= 4:
            k, s = draw(st.sampled_from([2, 3])), draw(st.sampled_from([1, 2]))
            p = draw(st.integers(0, k // 2))
            layers.append(pool(name, (prev,), cin, hin, k, s, p))
            shapes[name] = (cin, out_size(hin, k, s, p))
        else:
            k, s, d = (draw(st.sampled_from(v)) for v in ([1, 3, 5], [1, 2], [1, 2]))
            p = draw(st.integers(0, (k // 2) * d))
            assume(out_size(hin, k, s, p, d) >= 1)
            cout = draw(st.sampled_from([2, 4, 8]))
            layers.append(conv(name, (prev,), cin, hin, cout, k, s, p, d))
            shapes[name] = (cout, out_size(hin, k, s, p, d))
        prev = name
    return layers


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(models(), st.sampled_from([3072, 8192, 16384, 65536, 1 << 20]),
       st.sampled_from([1, 2, 4, 8]), st.integers(1, 3), st.sampled_from(["dp", "greedy"]))
def test_random_chains_keep_every_invariant(layers, lmem, banks, batch, method):
    npu = toy_npu(lmem, banks)
    try:
        plan = compile_groups(layers, npu, batch=batch, method=method)
    except InfeasibleError:
        assume(False)
    assert [n for g in plan.groups for n in g.layers] == [layer.name for layer in layers]
    view = analyze_layers(layers)
    for g in plan.groups:
        if g.status is GroupStatus.UNGROUPED:  # weights too big for this tiny LMEM
            assert "stream" in g.reason and not g.buffers
            continue
        check_buffers(g, lmem)
        check_slices(g, view)
    if method == "dp":  # running every layer alone is one of the plans DP compares
        assert plan.seconds <= plan.baseline_seconds * (1 + 1e-9)
