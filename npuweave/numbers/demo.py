"""An offline end-to-end run: tune a small MLP on scikit-learn's bundled digits data set.

The MLP (64 -> 64 -> 32 -> 10, ReLU) is trained once with scikit-learn's ``MLPClassifier``
(fixed seed); inference is re-done in NumPy with every layer's input and weights quantized
by the configuration under test. Half of the 1,797 images are the full test set, a fixed 30%
of those the small set. As in the thesis's evaluation, layer-wise optimization is applied to
weights only (``WGT-ONLY``) on the thesis's FPGA platform (FLOAT 32/16, FIXED, EXP), with the
default objective; Ristretto runs on the same model for comparison.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from npuweave.errors import NpuweaveError
from npuweave.numbers.baselines import ristretto
from npuweave.numbers.config import NumberConfig
from npuweave.numbers.descriptors import (
    NetworkDescriptor,
    PlatformDescriptor,
    network_from_dict,
    platform_from_dict,
)
from npuweave.numbers.format import FLOAT32, Family, NumberFormat
from npuweave.numbers.quantize import quantize
from npuweave.numbers.tuner import TuneResult, tune

FPGA_FORMATS = ["FLOAT 32", "FLOAT 16", "FIXED 2-32", "EXP 2-9"]


@dataclass
class DigitsMLP:
    """Trained weights plus the test data; ``accuracy(config, subset)`` is the evaluator."""

    weights: list[np.ndarray]
    biases: list[np.ndarray]
    x_test: np.ndarray
    y_test: np.ndarray
    small: np.ndarray  # indices of the small set within the test set
    act_max_abs: list[float]

    @property
    def layer_names(self) -> list[str]:
        return [f"fc{i + 1}" for i in range(len(self.weights))]

    def __post_init__(self) -> None:
        self._cache: dict[tuple[int, NumberFormat], np.ndarray] = {}

    def _weight(self, i: int, fmt: NumberFormat) -> np.ndarray:
        key = (i, fmt)
        if key not in self._cache:
            self._cache[key] = quantize(self.weights[i], fmt)
        return self._cache[key]

    def predict(self, config: NumberConfig, x: np.ndarray) -> np.ndarray:
        h = x
        for i, name in enumerate(self.layer_names):
            h = quantize(h, config.activation(name) or FLOAT32)
            h = h @ self._weight(i, config.weight(name) or FLOAT32) + self.biases[i]
            if i < len(self.weights) - 1:
                np.maximum(h, 0, out=h)
        return np.argmax(h, axis=1)

    def accuracy(self, config: NumberConfig, subset: str) -> float:
        idx = self.small if subset == "small" else slice(None)
        return float(np.mean(self.predict(config, self.x_test[idx]) == self.y_test[idx]))

    def network(self, err_margin: float) -> NetworkDescriptor:
        return network_from_dict({
            "platform": "FPGA",
            "layer_name": self.layer_names,
            "err_margin": err_margin,
            "layerwise_opt": "WGT-ONLY",
            "wgt_size": [int(w.size) for w in self.weights],
            "act_size": [int(w.shape[0]) for w in self.weights],
            "wgt_max_abs": [float(np.max(np.abs(w))) for w in self.weights],
            "act_max_abs": self.act_max_abs,
        }, "<digits demo>")


def fpga_platform() -> PlatformDescriptor:
    return platform_from_dict({"supported_formats": {"FPGA": FPGA_FORMATS}}, "<fpga>")


def train_digits_mlp(seed: int = 0, hidden: tuple[int, ...] = (64, 32)) -> DigitsMLP:
    """Train the demo MLP (needs scikit-learn; deterministic for a given seed)."""
    try:
        from sklearn.datasets import load_digits
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.model_selection import train_test_split
        from sklearn.neural_network import MLPClassifier
    except ImportError:
        raise NpuweaveError("the digits demo needs scikit-learn: "
                            "pip install 'npuweave[test]' or pip install scikit-learn") from None
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.5, random_state=seed, stratify=y)
    clf = MLPClassifier(hidden_layer_sizes=hidden, max_iter=400, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(x_tr, y_tr)
    weights = [w.astype(np.float32) for w in clf.coefs_]
    biases = [b.astype(np.float32) for b in clf.intercepts_]
    act_max, h = [], x_tr
    for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
        act_max.append(float(np.max(np.abs(h))))
        h = h @ w + b
        if i < len(weights) - 1:
            h = np.maximum(h, 0)
    small = np.random.default_rng(seed).permutation(len(y_te))[: int(0.3 * len(y_te))]
    return DigitsMLP(weights, biases, x_te, y_te, np.sort(small), act_max)


def param_reduction(config: NumberConfig, net: NetworkDescriptor) -> float:
    """FLOAT(32) parameter bytes over the configuration's parameter bytes."""
    total = sum(net.wgt_size)
    used = sum((config.weight(n) or FLOAT32).bits * net.wgt_size[i]
               for i, n in enumerate(net.layer_name))
    return 32 * total / used


def layer_formats(config: NumberConfig, net: NetworkDescriptor) -> str:
    """Table III.4's notation: ``I3 / E3-E2-E3`` (activations / per-layer weights)."""
    letter = {Family.FLOAT: "F", Family.FIXED: "I", Family.EXP: "E", Family.BINARY: "B"}

    def tag(f: NumberFormat | None) -> str:
        f = f or FLOAT32
        return f"{letter[f.family]}{f.bits}"

    acts = list(dict.fromkeys(tag(config.activation(n)) for n in net.layer_name))
    return f"{'-'.join(acts)} / {'-'.join(tag(config.weight(n)) for n in net.layer_name)}"


@dataclass(frozen=True)
class DemoRow:
    margin: float
    method: str
    result: TuneResult
    formats: str
    param_reduction: float


def run_demo(margins: tuple[float, ...] = (0.07, 0.01), seed: int = 0,
             out_dir: str | os.PathLike[str] | None = None, progress=None) -> list[DemoRow]:
    """Tune the digits MLP with libnumber and Ristretto at each margin; logs go to ``out_dir``."""
    model = train_digits_mlp(seed)
    platform = fpga_platform()
    rows = []
    for margin in margins:
        net = model.network(margin)
        for method in ("libnumber", "ristretto"):
            log = Path(out_dir) / f"digits_{method}_{margin:g}.csv" if out_dir else None
            if method == "libnumber":
                res = tune(net, platform, model.accuracy, log_path=log, progress=progress)
            else:
                res = ristretto(net, model.accuracy, log_path=log, progress=progress)
            rows.append(DemoRow(margin, method, res, layer_formats(res.config, net),
                                param_reduction(res.config, net)))
    return rows
