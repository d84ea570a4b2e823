"""``GroupSpan``: which tensors a candidate group loads, keeps and stores.

A group is a contiguous run ``first .. last`` of the model's layers. A tensor read inside the
group but produced outside it is a group *input* (loaded from DRAM); a tensor produced inside
and read after the group (or by nobody: a model output) is a group *output* (stored to DRAM).
Everything else stays in LMEM. Because layers form a DAG, a tensor may cross several group
boundaries (a ResNet shortcut); it then goes through DRAM once out and once per reading group.
"""

from __future__ import annotations

from dataclasses import dataclass

from npuweave.compile.layergroup.tensors import ModelView


@dataclass(frozen=True, slots=True)
class GroupSpan:
    first: int
    last: int
    inputs: tuple[str, ...]  # in order of first use
    outputs: tuple[str, ...]  # in order of production
    whole_h: bool  # some layer needs the whole height: no H slicing

    @property
    def indices(self) -> range:
        return range(self.first, self.last + 1)

    def step(self, i: int) -> int:
        """Compute timestep of layer ``i`` (step 0 is the load-only prologue)."""
        return i - self.first + 1

    @property
    def timesteps(self) -> int:
        """Prologue, one compute step per layer, epilogue."""
        return self.last - self.first + 3


def make_span(view: ModelView, first: int, last: int) -> GroupSpan:
    """Describe the candidate group ``first .. last`` (inclusive) of ``view``'s layers."""
    inputs: list[str] = []
    outputs: list[str] = []
    for i in range(first, last + 1):
        for t in view.inputs[i]:
            producer = view.tensors[t].producer
            if not first <= producer <= last and t not in inputs:
                inputs.append(t)
        out = view.output(i)
        if not out.consumers or max(out.consumers) > last:
            outputs.append(out.name)
    whole = any(view.whole_h(i) for i in range(first, last + 1))
    return GroupSpan(first, last, tuple(inputs), tuple(outputs), whole)
