"""Invariant checks shared by the property and end-to-end layer-group tests."""

from npuweave.compile.layergroup import propagate_ranges
from npuweave.compile.layergroup.allocate import ALIGN
from npuweave.compile.layergroup.backward import input_rows
from npuweave.compile.layergroup.slicing import rows, split_range
from npuweave.compile.layergroup.span import make_span


def check_buffers(g, lmem):
    bufs = g.buffers
    for b in bufs:
        assert b.address >= 0 and b.address % ALIGN == 0 and b.end_address <= lmem
        assert all(b.start <= u <= b.end for u in b.uses), b  # live whenever used
    for i, a in enumerate(bufs):
        for b in bufs[i + 1:]:
            if a.start <= b.end and b.start <= a.end:  # overlap in time ...
                assert a.end_address <= b.address or b.end_address <= a.address, (a, b)


def check_slices(g, view, element_bytes=2):
    span = make_span(view, g.first, g.first + len(g.layers) - 1)
    by_name = {b.name: b for b in g.buffers}
    ranges = [propagate_ranges(view, span, g.h_slices, k) for k in range(g.h_slices)]
    for t in span.outputs:  # the stored slices tile each output exactly
        h = view.tensors[t].h
        pieces = [split_range(h, g.h_slices, k) for k in range(g.h_slices)]
        assert sum(rows(p) for p in pieces) == h
        assert all(p is None or r[t][0] <= p[0] and p[1] <= r[t][1]
                   for p, r in zip(pieces, ranges, strict=True))
    for i in span.indices:
        layer, step = view.layers[i], span.step(i)
        needed = [layer.name] + list(view.inputs[i])
        needed += [f"{layer.name}.weight"] if layer.weight_elems else []
        for name in needed:  # every operand is in LMEM when the layer computes
            assert by_name[name].live_at(step), (name, step)
        out_h = view.output(i).h
        for r in ranges:
            for pos, t in enumerate(view.inputs[i]):
                need = input_rows(layer, pos, r[layer.name], out_h, view.tensors[t].h,
                                  view.whole_h(i))
                have = r[t]
                assert need is None or have[0] <= need[0] and need[1] <= have[1]
                nbytes = rows(have) * view.tensors[t].row_elems * g.n_per_slice * element_bytes
                assert by_name[t].bytes >= nbytes
