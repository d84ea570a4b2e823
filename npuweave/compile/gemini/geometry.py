"""Box arithmetic and the byte-size rules derived from the published Gemini IR files.

Size rules (checked against every sized entry of the ResNet-34 files, see docs/GEMINI_IR.md):

* feature map ``[N, C, H, W]``: ``N * align_up(C, align) * H * W * bitwidth / 8``; ``align`` is
  the channel count that fills 64 bits (8 channels at 8 bit, 4 at 16 bit).
* weight ``[0, K, C, R*S]``: ``K * (align_up(C, 8) * R*S + 32)``: int8 weights with the input
  channels padded to 8, plus 32 bytes per output channel (bias and requantization/BatchNorm
  parameters).
"""

from __future__ import annotations

from collections.abc import Iterable

from npuweave.compile.gemini.model import Box

#: channel alignment fills this many bits
ALIGN_BITS = 64
#: bytes of per-output-channel parameters stored after each weight row
WEIGHT_EXTRA_BYTES = 32
#: (bitwidth, align) pairs an fmap without an explicit bitwidth may use
FMAP_FORMATS = ((8, 8), (16, 4))


def align_up(x: int, a: int) -> int:
    return -(-x // a) * a if a > 0 else x


def fmap_bytes(box: Box, bitwidth: int, align: int) -> int:
    """Bytes of a feature-map box.

    Examples
    --------
    >>> fmap_bytes(Box((0, 0, 0, 0), (0, 2, 223, 223)), 8, 8)  # 3 channels padded to 8
    401408
    """
    n, c, h, w = box.shape
    return n * align_up(c, align) * h * w * bitwidth // 8


def fmap_sizes(box: Box) -> set[int]:
    """The sizes an fmap box may have when its bit width is not recorded (8 or 16 bit)."""
    return {fmap_bytes(box, bw, al) for bw, al in FMAP_FORMATS}


def weight_bytes(box: Box, align: int = 8, bitwidth: int = 8) -> int:
    """Bytes of a weight box ``[0, K, C, R*S]``.

    Examples
    --------
    >>> weight_bytes(Box((0, 0, 0, 0), (0, 63, 2, 48)))  # ResNet conv1: 64 x 3 x 7 x 7
    27136
    """
    _, k, c, rs = box.shape
    return k * (align_up(c, align) * rs * bitwidth // 8 + WEIGHT_EXTRA_BYTES)


def bounding(boxes: Iterable[Box]) -> Box | None:
    """The smallest box containing all ``boxes`` (None for none)."""
    boxes = list(boxes)
    if not boxes:
        return None
    lower = tuple(min(col) for col in zip(*(b.lower for b in boxes)))
    upper = tuple(max(col) for col in zip(*(b.upper for b in boxes)))
    return Box(lower, upper)


def intersect(a: Box, b: Box) -> Box | None:
    lower = tuple(max(x, y) for x, y in zip(a.lower, b.lower))
    upper = tuple(min(x, y) for x, y in zip(a.upper, b.upper))
    return Box(lower, upper) if all(lo <= u for lo, u in zip(lower, upper)) else None


def subtract(a: Box, b: Box) -> list[Box]:
    """``a`` minus ``b`` as disjoint boxes (at most two per axis)."""
    cut = intersect(a, b)
    if cut is None:
        return [a]
    pieces = []
    lower, upper = list(a.lower), list(a.upper)
    for axis in range(len(lower)):
        if lower[axis] < cut.lower[axis]:
            hi = list(upper)
            hi[axis] = cut.lower[axis] - 1
            pieces.append(Box(tuple(lower), tuple(hi)))
        if cut.upper[axis] < upper[axis]:
            lo = list(lower)
            lo[axis] = cut.upper[axis] + 1
            pieces.append(Box(tuple(lo), tuple(upper)))
        lower[axis], upper[axis] = cut.lower[axis], cut.upper[axis]
    return pieces


def uncovered(target: Box, boxes: Iterable[Box]) -> list[Box]:
    """The parts of ``target`` that no box in ``boxes`` covers (empty when fully covered)."""
    rest = [target]
    for b in boxes:
        rest = [piece for r in rest for piece in subtract(r, b)]
        if not rest:
            break
    return rest
