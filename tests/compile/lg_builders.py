"""Hand-built ``Layer``s for the layer-group tests (NCHW per sample, square maps)."""

from __future__ import annotations

from npuweave.hardware import NPU
from npuweave.workload.layer import Geometry, Layer, LayerKind


def out_size(h: int, k: int, s: int, p: int, d: int = 1) -> int:
    return (h + 2 * p - d * (k - 1) - 1) // s + 1


def conv(name: str, inputs: tuple[str, ...], cin: int, h: int, cout: int, k: int = 3,
         s: int = 1, p: int | None = None, d: int = 1, groups: int = 1,
         extra_in: int = 0, ops: tuple[str, ...] = ("Conv", "Relu")) -> Layer:
    p = (k // 2) * d if p is None else p
    oh = out_size(h, k, s, p, d)
    kk = (cin // groups) * k * k
    geo = Geometry((cin, h, h), (cout, oh, oh), (k, k), (s, s), (p, p, p, p), (d, d), groups)
    return Layer(name, LayerKind.CONV, ops, (groups, oh * oh, kk, cout // groups),
                 macs=cout * oh * oh * kk, vector_ops=cout * oh * oh,
                 weight_elems=cout * kk + cout, in_elems=cin * h * h + extra_in,
                 out_elems=cout * oh * oh, inputs=inputs, geometry=geo)


def pool(name: str, inputs: tuple[str, ...], c: int, h: int, k: int, s: int, p: int = 0,
         whole: bool = False) -> Layer:
    oh = out_size(h, k, s, p)
    geo = Geometry((c, h, h), (c, oh, oh), (k, k), (s, s), (p, p, p, p))
    op = "GlobalAveragePool" if whole else "MaxPool"
    return Layer(name, LayerKind.VECTOR, (op,), None, 0, c * oh * oh * k * k, 0, c * h * h,
                 c * oh * oh, inputs=inputs, geometry=geo, splittable_h=not whole)


def add(name: str, inputs: tuple[str, ...], c: int, h: int) -> Layer:
    return Layer(name, LayerKind.VECTOR, ("Add", "Relu"), None, 0, 2 * c * h * h, 0,
                 2 * c * h * h, c * h * h, inputs=inputs)


def fc(name: str, inputs: tuple[str, ...], cin: int, cout: int) -> Layer:
    return Layer(name, LayerKind.GEMM, ("Gemm",), (1, 1, cin, cout), cin * cout, cout,
                 cin * cout + cout, cin, cout, inputs=inputs, splittable_h=False)


def chain(n: int, c: int = 8, h: int = 16, k: int = 3) -> list[Layer]:
    """``n`` same-shape 3x3 convs in a row, the first reading the graph input."""
    names = [f"c{i}" for i in range(n)]
    return [conv(names[i], (names[i - 1] if i else "",), c, h, c, k) for i in range(n)]


def bottleneck(prefix: str, x: str, cin: int, h: int, mid: int, s: int) -> list[Layer]:
    """A ResNet bottleneck: 1x1, 3x3 (stride s), 1x1 + shortcut add (projection if needed)."""
    cout = 4 * mid
    oh = out_size(h, 3, s, 1)
    layers = [conv(f"{prefix}a", (x,), cin, h, mid, 1),
              conv(f"{prefix}b", (f"{prefix}a",), mid, h, mid, 3, s)]
    short = x
    if s != 1 or cin != cout:
        layers.append(conv(f"{prefix}p", (x,), cin, h, cout, 1, s, ops=("Conv",)))
        short = f"{prefix}p"
    layers.append(conv(f"{prefix}c", (f"{prefix}b", short), mid, oh, cout, 1,
                       extra_in=cout * oh * oh, ops=("Conv", "Add", "Relu")))
    return layers


def mini_resnet(h: int = 56, blocks: int = 3) -> list[Layer]:
    """Stem, max pool, ``blocks`` bottlenecks (one strided), global pool, FC."""
    layers = [conv("stem", ("",), 3, 2 * h * 2, 16, 7, 2),
              pool("pool", ("stem",), 16, 2 * h, 3, 2, 1)]
    x, c, hh = "pool", 16, h
    for b in range(blocks):
        s = 2 if b == blocks - 1 else 1
        layers += bottleneck(f"b{b}", x, c, hh, 8 * (1 + b), s)
        x, c, hh = f"b{b}c", 32 * (1 + b), out_size(hh, 3, s, 1)
    layers += [pool("gap", (x,), c, hh, hh, 1, whole=True), fc("fc", ("gap",), c, 10)]
    return layers


def toy_npu(lmem: int = 1 << 20, banks: int = 4, bw: float = 1e9) -> NPU:
    return NPU(name="toy", pe_rows=8, pe_cols=8, clock_hz=1e9, dram_bw=bw,
               weight_buffer=lmem, act_buffer=lmem, lmem_bytes=lmem, lmem_banks=banks,
               global_mem_bytes=1 << 30, vector_lanes=8, precision_bits=16)
