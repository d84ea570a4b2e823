"""The tuner's search space: slots (layer x weight/activation), their supported formats, moves.

A *state* is a tuple with one ``NumberFormat`` per slot. Slots of one kind that are not
optimized layer by layer form one *group* that shares (type, bit width); the bias stays per
slot, initialized by value profiling (``wgt_max_abs``/``act_max_abs``) so that the largest
magnitude fits. Every move returns new states and never an invalid format.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace

from npuweave.errors import ConfigError
from npuweave.numbers.config import NumberConfig
from npuweave.numbers.descriptors import NetworkDescriptor, PlatformDescriptor
from npuweave.numbers.format import EXP, FIXED, FLOAT32, Family, NumberFormat

State = tuple[NumberFormat, ...]
LADDER = (Family.FLOAT, Family.FIXED, Family.EXP)
BIAS_WINDOW = 16  # bias moves stay within this many steps of the profiled bias


@dataclass(frozen=True, slots=True)
class Slot:
    layer: int
    kind: str


def profiled_bias(family: Family, bits: int, max_abs: float | None) -> int | None:
    """Bias that puts ``max_abs`` just inside the range (None: the family's default).

    FIXED: the largest B with ``2^(1-B) > max_abs``; EXP: top power ``2^ceil(log2 max_abs)``.

    Examples
    --------
    >>> profiled_bias(Family.FIXED, 8, 5.05), profiled_bias(Family.FIXED, 8, 0.165)
    (-2, 3)
    """
    if not max_abs or family not in (Family.FIXED, Family.EXP):
        return None
    if family is Family.FIXED:
        return -math.floor(math.log2(max_abs))
    return 2 ** (bits - 1) - 1 - math.ceil(math.log2(max_abs))


class Space:
    """Supported formats per kind, slot groups, and the moves of Algorithms 1 and 2."""

    def __init__(self, net: NetworkDescriptor, platform: PlatformDescriptor) -> None:
        self.net = net
        self.slots = [Slot(i, k) for k in net.quantize for i in range(len(net.layer_name))]
        self.floats: dict[str, dict[int, NumberFormat]] = {}
        self.widths: dict[str, dict[Family, list[int]]] = {}
        for kind in net.quantize:
            table: dict[Family, set[int]] = {}
            floats: dict[int, NumberFormat] = {}
            for f in platform.formats(net.platform, kind):
                table.setdefault(f.family, set()).add(f.bits)
                if f.family is Family.FLOAT:
                    floats.setdefault(f.bits, f)
            self.widths[kind] = {fam: sorted(ws) for fam, ws in table.items()}
            self.floats[kind] = floats
        self.groups: list[list[int]] = []
        for kind in net.quantize:
            idx = [i for i, s in enumerate(self.slots) if s.kind == kind]
            per_layer = net.layerwise_opt.per_layer(kind)
            self.groups.extend([[i] for i in idx] if per_layer else [idx])

    # -- building formats -------------------------------------------------------------------
    def make(self, slot: Slot, family: Family, bits: int) -> NumberFormat | None:
        if family is Family.FLOAT:
            return self.floats[slot.kind].get(bits)
        if bits not in self.widths[slot.kind].get(family, ()):
            return None
        bias = profiled_bias(family, bits, self.net.max_abs(slot.kind, slot.layer))
        try:
            if family is Family.FIXED:
                return FIXED(bits, 0 if bias is None else bias)
            if family is Family.EXP:
                return EXP(bits, bias)
            return NumberFormat(Family.BINARY, 1, 0, 0, 0 if bias is None else bias)
        except ConfigError:
            return None

    def initial(self) -> State:
        """FLOAT(32) everywhere it is supported, else each kind's widest format."""
        out = []
        for s in self.slots:
            fmt = self.floats[s.kind].get(32)
            if fmt is None:
                fam, w = max(((f, max(ws)) for f, ws in self.widths[s.kind].items()),
                             key=lambda t: t[1])
                fmt = self.make(s, fam, w) or FLOAT32
            out.append(fmt)
        return tuple(out)

    def config(self, state: State, fixed: NumberConfig | None = None) -> NumberConfig:
        items = dict(fixed or {})
        for s, fmt in zip(self.slots, state, strict=True):
            for name in self.net.object_names(s.layer, s.kind):
                items[name] = fmt
        return NumberConfig(items)

    def family_widths(self, family: Family) -> list[int]:
        return sorted({w for t in self.widths.values() for w in t.get(family, ())})

    # -- Phase 1: one (type, width) for every slot ------------------------------------------
    def uniform(self, state: State, family: Family, bits: int) -> State:
        out = list(state)
        for i, s in enumerate(self.slots):
            ws = self.widths[s.kind].get(family)
            if not ws:
                continue
            below = [w for w in ws if w <= bits]
            fmt = self.make(s, family, max(below) if below else min(ws))
            if fmt is not None:
                out[i] = fmt
        return tuple(out)

    # -- Algorithm 2 moves ------------------------------------------------------------------
    def bias_moves(self, state: State, step: int) -> Iterator[State]:
        """Every state with one FIXED/EXP slot's bias moved by ``step`` (+1 or -1)."""
        for i, (s, fmt) in enumerate(zip(self.slots, state, strict=True)):
            if fmt.family not in (Family.FIXED, Family.EXP):
                continue
            home = profiled_bias(fmt.family, fmt.bits, self.net.max_abs(s.kind, s.layer))
            if home is None:
                home = 0 if fmt.family is Family.FIXED else 2 ** (fmt.exponent - 1) - 1
            if abs(fmt.bias + step - home) > BIAS_WINDOW:
                continue
            try:
                moved = fmt.with_bias(fmt.bias + step)
            except ConfigError:
                continue
            yield state[:i] + (moved,) + state[i + 1:]

    def width_moves(self, state: State, step: int) -> Iterator[State]:
        """Every state with one group one supported width narrower (-1) or wider (+1)."""
        for group in self.groups:
            out = list(state)
            for i in group:
                moved = self._resize(self.slots[i], state[i], step)
                if moved is None:
                    break
                out[i] = moved
            else:
                yield tuple(out)

    def _resize(self, slot: Slot, fmt: NumberFormat, step: int) -> NumberFormat | None:
        ws = self.widths[slot.kind].get(fmt.family, [])
        pos = ws.index(fmt.bits) + step if fmt.bits in ws else -1
        if not 0 <= pos < len(ws):
            return None
        bits = ws[pos]
        if fmt.family is Family.FLOAT:
            return self.floats[slot.kind].get(bits)
        try:
            if fmt.family is Family.FIXED:  # same bias keeps the top of the range
                return replace(fmt, fraction=bits - 1)
            if fmt.family is Family.EXP:  # keep the largest power of two
                return EXP(bits, 2 ** (bits - 1) - 1 - fmt.emax)
        except ConfigError:
            return None
        return None

    def type_moves(self, state: State) -> Iterator[State]:
        """Every state with one group switched to another type, at the same or next narrower width."""
        for group in self.groups:
            kind = self.slots[group[0]].kind
            cur = state[group[0]]
            for fam, ws in self.widths[kind].items():
                if fam is cur.family:
                    continue
                narrower = [w for w in ws if w <= cur.bits]
                if not narrower:
                    continue  # a type change never widens: that is the recovery phase's job
                bits = max(narrower)
                out = list(state)
                for i in group:
                    fmt = self.make(self.slots[i], fam, bits)
                    if fmt is None:
                        break
                    out[i] = fmt
                else:
                    yield tuple(out)
