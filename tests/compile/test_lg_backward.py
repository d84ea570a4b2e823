"""Backward H by hand: conv 3x3 stride 1 and 2 with padding, pooling, the seed's h/2 rule."""

from lg_builders import chain, conv, pool, toy_npu

from npuweave.compile.layergroup.backward import (
    conv_input_rows,
    duplicated_rows,
    input_rows,
    propagate_ranges,
    too_much_duplication,
)
from npuweave.compile.layergroup.slicing import n_pieces, n_slice_counts, split_range
from npuweave.compile.layergroup.span import make_span
from npuweave.compile.layergroup.tensors import analyze_layers


def test_conv3x3_stride1_pad1():
    # H=8, rows [a, b) need [a*1 - 1, (b-1)*1 - 1 + 2 + 1) = [a-1, b+1), clipped to [0, 8)
    assert conv_input_rows((0, 4), 3, 1, 1, 1, 8) == (0, 5)
    assert conv_input_rows((4, 8), 3, 1, 1, 1, 8) == (3, 8)
    assert conv_input_rows((2, 5), 3, 1, 1, 1, 8) == (1, 6)


def test_conv3x3_stride2_pad1():
    # H_in=8 -> H_out=4. [a, b) needs [2a - 1, (b-1)*2 - 1 + 3) = [2a-1, 2b)
    assert conv_input_rows((0, 2), 3, 2, 1, 1, 8) == (0, 4)  # [-1, 4) clipped
    assert conv_input_rows((2, 4), 3, 2, 1, 1, 8) == (3, 8)
    assert conv_input_rows((1, 2), 3, 2, 1, 1, 8) == (1, 4)


def test_dilated_conv_and_no_padding():
    # 3x3 dilation 2 (effective 5), pad 0, H=10: [a, b) needs [a, b - 1 + 4 + 1) = [a, b+4)
    assert conv_input_rows((0, 3), 3, 1, 0, 2, 10) == (0, 7)
    assert conv_input_rows((3, 6), 3, 1, 0, 2, 10) == (3, 10)


def test_pooling():
    # max pool 2x2 stride 2, no pad: [a, b) -> [2a, 2b)
    p = pool("p", ("",), 4, 8, 2, 2)
    assert input_rows(p, 0, (1, 3), 4, 8, whole=False) == (2, 6)
    # max pool 3x3 stride 2 pad 1 (ResNet stem), 112 -> 56: [0, 28) -> [-1, 56) -> [0, 56)
    assert conv_input_rows((0, 28), 3, 2, 1, 1, 112) == (0, 56)
    assert conv_input_rows((28, 56), 3, 2, 1, 1, 112) == (55, 112)
    # a global pool needs everything whatever the output range
    g = pool("g", ("",), 4, 7, 7, 1, whole=True)
    assert input_rows(g, 0, (0, 1), 1, 7, whole=True) == (0, 7)


def test_elementwise_operand_passes_through():
    c = conv("c", ("x", "y"), 4, 8, 4, 3, extra_in=4 * 64, ops=("Conv", "Add"))
    assert input_rows(c, 0, (2, 4), 8, 8, whole=False) == (1, 5)  # the conv input: halo
    assert input_rows(c, 1, (2, 4), 8, 8, whole=False) == (2, 4)  # the shortcut: same rows


def test_seed_h_half_rule():
    # h = 100: [0, 80) and [20, 100) overlap 60 > 50 -> fail; [0, 60), [20, 100): 40 -> ok
    assert duplicated_rows([(0, 80), (20, 100)]) == 60
    assert duplicated_rows([(0, 60), (20, 100)]) == 40
    assert duplicated_rows([(0, 5), (5, 10), None]) == 0
    assert 2 * 60 > 100 and not 2 * 40 > 100


def test_propagate_two_convs_two_slices():
    view = analyze_layers(chain(2, c=8, h=16))
    span = make_span(view, 0, 1)
    s0 = propagate_ranges(view, span, 2, 0)
    s1 = propagate_ranges(view, span, 2, 1)
    # c1 rows [0, 8) need c0 rows [0, 9), which need input rows [0, 10)
    assert (s0["c1"], s0["c0"], s0["@input"]) == ((0, 8), (0, 9), (0, 10))
    # c1 rows [8, 16) need c0 rows [7, 16), which need input rows [6, 16)
    assert (s1["c1"], s1["c0"], s1["@input"]) == ((8, 16), (7, 16), (6, 16))
    # duplication: input 10 + 10 - 16 = 4 <= 8; c0 9 + 9 - 16 = 2
    assert too_much_duplication(view, span, [s0, s1]) == ""


def test_deep_chain_breaks_h_half_rule():
    # 8 convs 3x3 on H=16 in 2 slices: the input halo grows by 1 row per layer and side:
    # slice 0 reads [0, 16) (8 + 8 rows, clipped), slice 1 [0, 16): duplication 16 > 8
    view = analyze_layers(chain(8, c=4, h=16))
    span = make_span(view, 0, 7)
    ranges = [propagate_ranges(view, span, 2, k) for k in range(2)]
    assert ranges[0]["@input"] == (0, 16) and ranges[1]["@input"] == (0, 16)
    assert too_much_duplication(view, span, ranges) == "@input"


def test_split_and_n_slices():
    assert [split_range(7, 2, k) for k in range(2)] == [(0, 3), (3, 7)]
    assert n_pieces(5, 2) == [2, 3]
    assert n_slice_counts(1) == [1]
    # 6 samples: 6, 3, 2, 2(skip), 2(skip), 1 -> slice counts 1, 2, 3, 6
    assert n_slice_counts(6) == [1, 2, 3, 6]


def test_toy_npu_is_valid():
    assert toy_npu().lmem_banks == 4
