"""Size rules against hand arithmetic, and box subtraction as a property."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from npuweave.compile.gemini.geometry import (
    fmap_bytes,
    fmap_sizes,
    subtract,
    uncovered,
    weight_bytes,
)
from npuweave.compile.gemini.index import to_absolute as tile_box
from npuweave.compile.gemini.model import Box


def box(lower, upper) -> Box:
    return Box(tuple(lower), tuple(upper))


def test_fmap_sizes_by_hand():
    # 3-channel 224x224 input: 3 channels pad to 8 at int8, to 4 at 16 bit
    assert fmap_bytes(box([0, 0, 0, 0], [0, 2, 223, 223]), 8, 8) == 8 * 224 * 224
    assert fmap_bytes(box([0, 0, 0, 0], [3, 2, 223, 223]), 16, 4) == 4 * 4 * 224 * 224 * 2
    # 1x1 stride-2 conv reads rows/cols 0..54 of a 64-channel map
    assert fmap_bytes(box([0, 0, 0, 0], [0, 63, 54, 54]), 8, 8) == 64 * 55 * 55
    assert fmap_sizes(box([0, 0, 0, 0], [0, 999, 0, 0])) == {1000, 2000}


def test_weight_sizes_by_hand():
    assert weight_bytes(box([0, 0, 0, 0], [0, 63, 2, 48])) == 64 * (8 * 49 + 32)  # 7x7, C=3
    assert weight_bytes(box([0, 0, 0, 0], [0, 511, 511, 8])) == 512 * (512 * 9 + 32)
    assert weight_bytes(box([0, 0, 0, 0], [0, 999, 511, 0])) == 1000 * (512 + 32)  # fc


coords = st.integers(0, 6)


@st.composite
def boxes(draw):
    lo = [draw(coords) for _ in range(4)]
    hi = [x + draw(st.integers(0, 4)) for x in lo]
    return box(lo, hi)


def cells(b: Box) -> set[tuple[int, ...]]:
    import itertools

    return set(itertools.product(*(range(lo, hi + 1) for lo, hi in zip(b.lower, b.upper))))


@given(boxes(), boxes())
def test_subtract_is_exact(a, b):
    pieces = subtract(a, b)
    got = [cells(p) for p in pieces]
    assert set().union(*got) == cells(a) - cells(b)
    assert sum(len(c) for c in got) == len(cells(a) - cells(b))  # disjoint pieces


@given(boxes(), st.lists(boxes(), max_size=4))
def test_uncovered_matches_cell_count(target, others):
    rest = uncovered(target, others)
    left = cells(target).difference(*(cells(o) for o in others))
    assert sum(r.volume for r in rest) == len(left)


def test_tile_local_coordinates_are_accepted():
    w_box = box([0, 0, 28, 0], [0, 63, 55, 55])  # the lower half of an H-split layer

    class W:  # the two attributes tile_box reads
        box = w_box

    absolute = box([0, 0, 28, 0], [0, 63, 41, 55])
    local = box([0, 0, 0, 0], [0, 63, 13, 55])
    assert tile_box(W, absolute) == absolute
    assert tile_box(W, local) == absolute
