"""LMEM interval packing: a known optimum, the bank rules, the first-fit fallback."""

from npuweave.compile.layergroup.allocate import _pack, allocate, allocation_order, peak_live
from npuweave.compile.layergroup.model import Buffer, BufferKind

A, W = BufferKind.ACTIVATION, BufferKind.WEIGHT


def buf(i, size, start, end, uses=(), kind=A):
    return Buffer(i, f"b{i}", kind, size, start, end, tuple(uses))


def addresses(bufs):
    return [b.address for b in bufs]


def test_known_optimal_placement():
    # W [0,3] 1024 (resident), A [0,1] 2048, B [1,2] 1024, C [2,3] 2048.
    # Live bytes per step: 3072, 4096, 4096, 3072 -> the optimum needs exactly 4096 bytes.
    # W goes first (0), then A (1024), B (3072); C reuses A's addresses once A is dead (1024).
    bufs = (buf(0, 1024, 0, 3, kind=W), buf(1, 2048, 0, 1), buf(2, 1024, 1, 2),
            buf(3, 2048, 2, 3))
    assert peak_live(bufs) == 4096
    placed = allocate(bufs, 4096, banks=1)
    assert addresses(placed) == [0, 1024, 3072, 1024]
    assert max(b.end_address for b in placed) == 4096
    assert allocate(bufs, 4032, banks=1) is None  # one granule less than the optimum


def test_order_resident_weights_then_longer_then_larger():
    bufs = [buf(0, 64, 1, 1), buf(1, 640, 1, 1), buf(2, 64, 1, 3), buf(3, 64, 0, 3, kind=W),
            buf(4, 64, 0, 1)]
    assert [b.id for b in allocation_order(bufs)] == [3, 4, 2, 1, 0]


def test_avoid_bank_crossing():
    # 4 banks of 1024. A (768) sits at 0. B (512) fits at 768 by first fit but would cross
    # the boundary at 1024, so the rule moves it to 1024.
    bufs = (buf(0, 768, 0, 1, uses=(0,)), buf(1, 512, 0, 1, uses=(1,)))
    assert addresses(allocate(bufs, 4096, banks=4)) == [0, 1024]
    assert addresses(allocate(bufs, 4096, banks=4, bank_rules=False)) == [0, 768]
    assert addresses(allocate(bufs, 4096, banks=1)) == [0, 768]


def test_avoid_banks_read_by_the_same_step():
    # A is read at step 1 while B is written at step 1: B leaves A's bank 0 for bank 1.
    bufs = (buf(0, 256, 0, 1, uses=(1,)), buf(1, 256, 1, 1, uses=(1,)))
    assert addresses(allocate(bufs, 4096, banks=4)) == [0, 1024]
    assert addresses(allocate(bufs, 4096, banks=1)) == [0, 256]


def test_bank_rule_yields_when_impossible():
    # 2 banks of 1024. A (1024) fills bank 0, B goes to bank 1; C is used with both and
    # has nowhere else to go: it shares bank 1 with B.
    bufs = (buf(0, 1024, 0, 1, uses=(1,)), buf(1, 512, 1, 1, uses=(1,)),
            buf(2, 512, 1, 1, uses=(1,)))
    assert addresses(allocate(bufs, 2048, banks=2)) == [0, 1024, 1536]


def test_fallback_to_first_fit():
    # 3 banks of 1024. A (512, longest-lived, placed first) takes 0. With the rules B (768)
    # moves from 512 to 1024 to avoid crossing, leaving 512..1024 and 1792..3072 (1280 B)
    # for C (1536): no room. Plain first fit packs A 0, B 512, C 1280.
    bufs = (buf(0, 512, 0, 2, uses=(0,)), buf(1, 768, 0, 1, uses=(5,)),
            buf(2, 1536, 1, 1, uses=(6,)))
    assert _pack(bufs, 3072, 3, bank_rules=True) is None
    assert addresses(allocate(bufs, 3072, banks=3)) == [0, 512, 1280]


def test_alignment_and_empty():
    assert allocate((), 1024) == ()
    placed = allocate((buf(0, 10, 0, 0), buf(1, 10, 0, 0)), 1024, banks=1)
    assert addresses(placed) == [0, 64]  # 10 B rounds up to one 64 B granule
