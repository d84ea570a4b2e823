"""The Layerweaver reproduction's assumptions, each derived from a statement in the seeds.

The thesis does not state every parameter of its experiment. What it does not state is chosen
here *before* any scheduling result is looked at, from what the seeds say qualitatively, and
the derivation is written out in ``docs/REPRODUCTION.md``:

* **Cost model**: ``maestro`` (thesis IV.5.A: "we estimated computation cycles from MAESTRO";
  weight-stationary dataflow).
* **Sequence length** of BB, BL, XL: ``DERIVED_SEQ_LEN``, the power of two nearest (in log) to
  the geometric centre of the range that ``seq_len_statements`` allows (thesis II.3, Figures
  II.7/II.8: transformers below the TPUv3-like NPU's ridge at batch 1, above it at batch 16,
  below the NNP-I-like NPU's ridge at batch 16).
* **NCF**: by default every request transfers its whole embedding tables (IV.5.A: transfer
  time "for each layer using its tensor dimensions"; IV.4.A: average layer latency 4.7 us to
  221 us at batch 1); ``ncf="gather"`` (the zoo's row gather, 0.1 us per layer) is the
  sensitivity study.
* **Fluid bound**: ``fluid_bound`` is the best STP any scheduler could reach on a pair.

Examples
--------
>>> CONFIGS["thesis"].cost_model, CONFIGS["thesis"].seq_len
('maestro', 32)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import log2, sqrt

from npuweave.errors import ConfigError, unknown_name

#: Per-request tokens of BB, BL, XL chosen from the seeds (see module docstring and the docs).
DERIVED_SEQ_LEN = 32
#: Transformers the statements apply to (zoo names).
TRANSFORMER_MODELS = ("bert-base", "bert-large", "xlnet")
#: How NCF fetches its embeddings: the zoo's row gather, or whole tables per request.
NCF_MODES = ("gather", "tables")


@dataclass(frozen=True, slots=True)
class Config:
    """A named physics setting of the reproduction: cost model and transformer tokens."""

    name: str
    cost_model: str
    seq_len: int | None
    description: str


CONFIGS = {
    "thesis": Config("thesis", "maestro", DERIVED_SEQ_LEN,
                     "the thesis's setup: MAESTRO layer times, sequence length derived from the "
                     "seeds (the reproduction)"),
    "systolic": Config("systolic", "systolic-ws", None,
                       "SCALE-Sim-exact weight-stationary cycles, the zoo's 128 tokens "
                       "(sensitivity study)"),
}


def get_config(name: str) -> Config:
    """The named configuration; unknown names raise ``UnknownNameError``."""
    try:
        return CONFIGS[name]
    except KeyError:
        raise unknown_name("reproduction config", name, list(CONFIGS)) from None


def check_ncf(mode: str) -> str:
    """Validate an NCF mode (``gather`` or ``tables``)."""
    if mode not in NCF_MODES:
        raise ConfigError(f"ncf (--ncf) must be one of {', '.join(NCF_MODES)}; got {mode!r}")
    return mode


def intensity(model: str, seq_len: int, batch: int) -> float:
    """Operations (2 per MAC) per weight byte at 16 bits, Figure II.7's arithmetic intensity.

    Activations stay on chip (IV.4: the activation buffers hold both models' activations), so
    the off-chip bytes are the weights (and embedding rows) of one request.

    Examples
    --------
    >>> round(intensity("bert-base", 32, 1), 1)
    31.9
    """
    from npuweave.cost import LayerCost, profile
    from npuweave.hardware import preset
    from npuweave.workload import load_layers

    layers = load_layers(f"{model}:seq_len={seq_len}")
    total = sum(profile(layers, preset("memory-centric"), batch, model="roofline"), LayerCost())
    return 2.0 * total.macs / total.weight_bytes


def ridge(npu_name: str) -> float:
    """Peak operations per second over DRAM bytes per second (Figure II.7's horizontal line)."""
    from npuweave.hardware import preset

    npu = preset(npu_name)
    return 2.0 * npu.peak_macs_per_s / npu.dram_bw


def seq_len_statements(model: str, seq_len: int) -> dict[str, bool]:
    """Whether ``model`` at ``seq_len`` tokens satisfies each statement of thesis II.3.

    * ``mc_b1_memory``: memory-intensive at batch 1 on the TPUv3-like NPU (II.8(a), IV.5.B).
    * ``mc_b16_compute``: above the TPUv3 line at batch 16 (II.7: "located above the
      horizontal line of TPUv3 except for NCF"; II.8(a): high PE utilization at batch 16).
    * ``cc_b16_memory``: DRAM saturates first at batch 16 on the NNP-I-like NPU (II.8(b)).

    Examples
    --------
    >>> seq_len_statements("bert-base", 32)
    {'mc_b1_memory': True, 'mc_b16_compute': True, 'cc_b16_memory': True}
    """
    i1, i16 = intensity(model, seq_len, 1), intensity(model, seq_len, 16)
    mc, cc = ridge("memory-centric"), ridge("compute-centric")
    return {"mc_b1_memory": i1 < mc, "mc_b16_compute": i16 > mc, "cc_b16_memory": i16 < cc}


def seq_len_range(lo: int = 1, hi: int = 512) -> tuple[int, int]:
    """The smallest and largest sequence length every transformer satisfies every statement at.

    Intensity grows with the sequence length, so each statement holds on an interval; the
    search bisects for its ends between ``lo`` and ``hi``.

    Examples
    --------
    >>> seq_len_range()  # doctest: +SKIP
    (7, 76)
    """
    def ok_low(n: int) -> bool:  # the lower end: above the TPUv3 ridge at batch 16
        return all(seq_len_statements(m, n)["mc_b16_compute"] for m in TRANSFORMER_MODELS)

    def ok_high(n: int) -> bool:  # the upper end: both "memory-intensive" statements
        return all(s["mc_b1_memory"] and s["cc_b16_memory"] for s in
                   (seq_len_statements(m, n) for m in TRANSFORMER_MODELS))

    a, b = lo, hi
    while a < b:  # smallest n with ok_low
        mid = (a + b) // 2
        a, b = (a, mid) if ok_low(mid) else (mid + 1, b)
    first = a
    a, b = first, hi
    while a < b:  # largest n with ok_high
        mid = (a + b + 1) // 2
        a, b = (mid, b) if ok_high(mid) else (a, mid - 1)
    return first, a


def pick_seq_len(first: int, last: int) -> int:
    """The power of two nearest in log to ``sqrt(first * last)``: equal margins to both ridges.

    Examples
    --------
    >>> pick_seq_len(7, 76)
    32
    """
    centre = log2(sqrt(first * last))
    return 2 ** round(centre)


def ncf_tables(npu_name: str, batch: int, cost_model: str) -> tuple[str, list]:
    """NCF whose embedding layers transfer their whole tables: ``("ncf-tables", costs)``.

    The labelled alternative for the thesis's NCF: its memory model computes "the data transfer
    time from off-chip DRAM for each layer using its tensor dimensions" (IV.5.A), and an
    embedding layer's weight tensor is its whole table.
    """
    from npuweave.cost import profile
    from npuweave.hardware import preset
    from npuweave.workload import load_layers
    from npuweave.workload.layer import LayerKind

    layers = [replace(x, gather_elems=x.weight_elems) if x.kind is LayerKind.EMBEDDING else x
              for x in load_layers("ncf")]
    return "ncf-tables", profile(layers, preset(npu_name), batch, model=cost_model)


def fluid_bound(compute: tuple[float, float], memory: tuple[float, float],
                alone: tuple[float, float]) -> float:
    """Best STP of two streams: maximize ``x1 + x2`` with PE and DRAM time each <= 1.

    ``x_i`` is model i's rate in standalone-normalized units (requests per second times its
    standalone time); one request of model i takes ``compute[i]`` seconds of PE time and
    ``memory[i]`` seconds of DRAM time; ``alone[i]`` is its standalone time. The optimum of
    this two-variable linear program lies at a vertex: one model alone, or both resources busy.

    Examples
    --------
    >>> fluid_bound((1.0, 0.2), (0.2, 1.0), (1.0, 1.0))  # mirror images: 1/1.2 each
    1.6666666666666667
    """
    c = [compute[i] / alone[i] for i in (0, 1)]
    m = [memory[i] / alone[i] for i in (0, 1)]
    best = max(1.0 / max(c[i], m[i]) for i in (0, 1) if max(c[i], m[i]) > 0)
    det = c[0] * m[1] - c[1] * m[0]
    if det != 0:
        x0, x1 = (m[1] - c[1]) / det, (c[0] - m[0]) / det
        if x0 >= 0 and x1 >= 0:
            best = max(best, x0 + x1)
    return best


def check_config(cost_model: str, seq_len: int | None) -> None:
    """Reject an unknown cost model (the registry's error) or a ``seq_len`` below 1."""
    from npuweave.cost import get_cost_model

    get_cost_model(cost_model)
    if seq_len is not None and (isinstance(seq_len, bool) or not isinstance(seq_len, int)
                                or seq_len < 1):
        raise ConfigError(f"seq_len (--seq-len) must be an integer >= 1, got {seq_len!r}; "
                          "use e.g. 32, or leave it out for the configuration's")


def resolve_physics(config: str = "thesis", cost_model: str | None = None,
                    seq_len: int | None = None) -> tuple[str, int | None]:
    """``(cost model, seq_len)``: the named configuration's, each overridden when given.

    Examples
    --------
    >>> resolve_physics(), resolve_physics("systolic"), resolve_physics(seq_len=8)
    (('maestro', 32), ('systolic-ws', None), ('maestro', 8))
    """
    cfg = get_config(config)
    model = cfg.cost_model if cost_model is None else cost_model
    seq = cfg.seq_len if seq_len is None else seq_len
    check_config(model, seq)
    return model, seq
