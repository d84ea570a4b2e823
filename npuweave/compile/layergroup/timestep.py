"""Lifetimes: which LMEM buffers a group's slice program needs, and over which timesteps.

The program of one slice has ``L + 2`` timesteps for ``L`` layers: step 0 is a load-only
prologue, step ``k`` (1..L) computes the k-th layer of the group while the DMA engine works
for its neighbours, and step ``L + 1`` is a store-only epilogue. Rules (inclusive intervals):

* group input first read at step ``k``: loaded during step ``k - 1``, live ``[k-1, last read]``;
* activation produced at step ``k``: ``[k, last in-group read]``; when it leaves the group it
  is stored during step ``k + 1``, so it lives at least until ``k + 1``;
* weight of the layer at step ``k``: loaded during the previous compute step, ``[k-1, k]``;
  when the group is sliced the weight stays resident for every slice, and because the same
  program repeats slice after slice its interval becomes the whole program ``[0, L+1]``;
* scratch of the layer at step ``k`` (32-bit partial sums of one output row): ``[k, k]``.

Buffer ids are assigned breadth-first over the group's layers (by depth from the group's
inputs, then model order): for each layer its new group inputs, weight, output, scratch.
"""

from __future__ import annotations

from npuweave.compile.layergroup.model import Buffer, BufferKind
from npuweave.compile.layergroup.span import GroupSpan
from npuweave.compile.layergroup.tensors import ModelView


def breadth_first(view: ModelView, span: GroupSpan) -> list[int]:
    """The group's layer indices ordered by depth from the group inputs, then model order."""
    depth: dict[int, int] = {}
    for i in span.indices:
        producers = [view.tensors[t].producer for t in view.inputs[i]]
        inner = [depth[p] for p in producers if p in depth]
        depth[i] = 1 + max(inner) if inner else 0
    return sorted(span.indices, key=lambda i: (depth[i], i))


def _reads(view: ModelView, span: GroupSpan, tensor: str) -> list[int]:
    return [span.step(c) for c in view.tensors[tensor].consumers if span.first <= c <= span.last]


def _activation(view: ModelView, span: GroupSpan, tensor: str) -> tuple[int, int, tuple]:
    reads = _reads(view, span, tensor)
    producer = view.tensors[tensor].producer
    if not span.first <= producer <= span.last:  # a group input
        return min(reads) - 1, max(reads), tuple(reads)
    k = span.step(producer)
    end = max(reads, default=k)
    if tensor in span.outputs:
        end = max(end, k + 1)
    return k, end, tuple(sorted({k, *reads}))


Lifetime = tuple[str, BufferKind, int, int, int, tuple[int, ...]]  # name kind bytes start end uses


def lifetimes(view: ModelView, span: GroupSpan, act_bytes: dict[str, int],
              weight_bytes: dict[int, int], scratch_bytes: dict[int, int],
              sliced: bool) -> list[Lifetime]:
    """Every buffer of the group as a plain tuple, in id order (cheap: used by the searches).

    ``act_bytes`` maps tensor names, ``weight_bytes`` and ``scratch_bytes`` layer indices, to
    their LMEM size for one slice; zero-sized entries get no buffer.
    """
    last = span.timesteps - 1
    out: list[Lifetime] = []
    seen: set[str] = set()
    act, weight, scratch = BufferKind.ACTIVATION, BufferKind.WEIGHT, BufferKind.SCRATCH
    for i in breadth_first(view, span):
        k = span.step(i)
        for t in view.inputs[i]:
            if t in span.inputs and t not in seen and act_bytes.get(t, 0) > 0:
                seen.add(t)
                out.append((t, act, act_bytes[t], *_activation(view, span, t)))
        name = view.layers[i].name
        if weight_bytes.get(i, 0) > 0:
            start, end = (0, last) if sliced else (k - 1, k)
            out.append((f"{name}.weight", weight, weight_bytes[i], start, end, (k,)))
        if act_bytes.get(name, 0) > 0:
            out.append((name, act, act_bytes[name], *_activation(view, span, name)))
        if scratch_bytes.get(i, 0) > 0:
            out.append((f"{name}.scratch", scratch, scratch_bytes[i], k, k, (k,)))
    return out


def assign_timesteps(view: ModelView, span: GroupSpan, act_bytes: dict[str, int],
                     weight_bytes: dict[int, int], scratch_bytes: dict[int, int],
                     sliced: bool) -> tuple[Buffer, ...]:
    """The group's buffers with ids and lifetimes (addresses still unset); see ``lifetimes``."""
    rows = lifetimes(view, span, act_bytes, weight_bytes, scratch_bytes, sliced)
    return tuple(Buffer(i, *row) for i, row in enumerate(rows))
