"""PREMA's predictor (section V-B): Algorithm 1 per layer plus the RNN output-length table.

The node-level part *is* the ``prema`` cost model (``npuweave.cost.prema``): a layer's estimate
is ``layer_cost(layer, npu, batch, model="prema").time_s``. The network-level part counts the
nodes: CNNs are static; an RNN's unrolled length comes from its profiled lookup table
(``npuweave.workload.seqlen``: geometric mean of the outputs seen for the input length).

A task's *actual* isolated time is the same per-layer sum over the graph unrolled to its actual
output length. Prediction error therefore comes only from the output-length table here; the
serving engine may add activation traffic on top (then the error statistics say so).

Examples
--------
>>> from npuweave.hardware import preset
>>> npu = preset("prema")
>>> est = estimate("rnn-mt1", npu, batch=1, in_len=10)
>>> est == isolated_time("rnn-mt1", npu, 1, 10, out_len=10)  # table says 10 words for 10
True
"""

from __future__ import annotations

from functools import cache

from npuweave.cost.registry import layer_cost
from npuweave.errors import ConfigError
from npuweave.hardware.npu import NPU
from npuweave.workload import zoo
from npuweave.workload.layer import Layer, check_batch
from npuweave.workload.lower import lower
from npuweave.workload.seqlen import MIX, profile, task_model

PREDICTOR_MODEL = "prema"
"""Cost model whose per-layer time is Algorithm 1."""


def layer_estimates(layers: tuple[Layer, ...] | list[Layer], npu: NPU, batch: int = 1
                    ) -> tuple[float, ...]:
    """Algorithm 1's estimate of each layer, in seconds (the ``prema`` cost model's time).

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import toy_fc
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> round(layer_estimates([fc], preset("prema"))[0] * 1e9)  # 770 cycles at 700 MHz
    1100
    """
    check_batch(batch)
    return tuple(layer_cost(lay, npu, batch, model=PREDICTOR_MODEL).time_s for lay in layers)


@cache
def task_layers(name: str, in_len: int | None = None, out_len: int | None = None
                ) -> tuple[Layer, ...]:
    """The lowered layers of a PREMA task; RNNs unrolled to ``in_len``/``out_len``.

    CNN tasks take no lengths; RNN tasks need ``in_len`` (and ``out_len``, except the linear
    sentiment model whose output length is its input length).
    """
    model = task_model(name)
    key = name.lower()
    if key not in ("rnn-sa", "rnn-mt1", "rnn-mt2", "rnn-asr"):
        if in_len is not None or out_len is not None:
            raise ConfigError(f"task {name!r} is a CNN: it takes no --in-len/--out-len")
        return tuple(lower(zoo.build(model)))
    if in_len is None:
        raise ConfigError(f"task {name!r} is an RNN: give its input length (--in-len)")
    prof = profile(key)
    prof.observed(in_len)  # raises a ConfigError naming the profiled range
    out = in_len if prof.linear else out_len
    if out is None:
        raise ConfigError(f"task {name!r}: give the actual output length (--out-len)")
    if out < 1:
        raise ConfigError(f"task {name!r}: output length must be >= 1, got {out}")
    return tuple(lower(zoo.build(model, **prof.zoo_params(in_len, out))))


def expected_out_len(name: str, in_len: int | None) -> int | None:
    """The table's output length for ``in_len`` (None for CNNs)."""
    key = name.lower()
    task_model(key)
    if in_len is None or key not in ("rnn-sa", "rnn-mt1", "rnn-mt2", "rnn-asr"):
        return None
    return profile(key).expected(in_len)


def isolated_time(name: str, npu: NPU, batch: int = 1, in_len: int | None = None,
                  out_len: int | None = None) -> float:
    """Seconds the task takes alone on ``npu`` with these lengths (sum of layer times)."""
    return sum(layer_estimates(task_layers(name, in_len, out_len), npu, batch))


def estimate(name: str, npu: NPU, batch: int = 1, in_len: int | None = None) -> float:
    """PREMA's ``Time_estimated``: Algorithm 1 over the graph unrolled to the table's length.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> round(estimate("cnn-gn", preset("prema")) * 1e3, 3)
    0.814
    """
    out = expected_out_len(name, in_len)
    return isolated_time(name, npu, batch, in_len, out)


__all__ = ["MIX", "estimate", "expected_out_len", "isolated_time", "layer_estimates",
           "task_layers"]
