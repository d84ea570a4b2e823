"""An offline end-to-end run: tune small networks on scikit-learn's bundled digits data set.

Two networks, registered by name in ``NETWORKS``: ``mlp`` (64 -> 64 -> 32 -> 10, ReLU), trained
with scikit-learn's ``MLPClassifier``, and ``cnn`` (conv 3x3x8 -> pool -> conv 3x3x16 -> fc 10,
see ``npuweave.numbers.cnn``), trained with the NumPy Adam loop there; both use a fixed seed.
Inference is re-done in NumPy with every layer's input and weights quantized by the
configuration under test. Half of the 1,797 images are the full test set, a fixed 30% of those
the small set. As in the thesis's evaluation, layer-wise optimization is applied to weights
only (``WGT-ONLY``) on the thesis's FPGA platform (FLOAT 32/16, FIXED, EXP), with the default
objective; Ristretto runs on the same model for comparison.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from npuweave.errors import ConfigError, MissingDependencyError
from npuweave.numbers import cnn
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

# layer(i, input, weights, bias) -> output of layer i (the next layer's input, or logits)
Layer = Callable[[int, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass
class DigitsModel:
    """Trained weights plus the test data; ``accuracy(config, subset)`` is the evaluator.

    ``act_size`` and ``act_max_abs`` are each layer's input elements per image and largest
    input magnitude on the training set (the profile the tuner starts its biases from).
    """

    title: str
    layer_names: list[str]
    layer: Layer
    weights: list[np.ndarray]
    biases: list[np.ndarray]
    x_test: np.ndarray
    y_test: np.ndarray
    small: np.ndarray  # indices of the small set within the test set
    act_size: list[int]
    act_max_abs: list[float]

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
            h = self.layer(i, h, self._weight(i, config.weight(name) or FLOAT32), self.biases[i])
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
            "act_size": self.act_size,
            "wgt_max_abs": [float(np.max(np.abs(w))) for w in self.weights],
            "act_max_abs": self.act_max_abs,
        }, "<digits demo>")


def fpga_platform() -> PlatformDescriptor:
    return platform_from_dict({"supported_formats": {"FPGA": FPGA_FORMATS}}, "<fpga>")


def require_sklearn() -> None:
    """Raise one line naming the ``digits`` extra when scikit-learn is missing.

    Called before any import of scikit-learn, so the plain install gets the line, not a
    traceback.
    """
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise MissingDependencyError(
            "the digits demo needs scikit-learn (its data set and MLP trainer): "
            "pip install 'npuweave[digits]'") from None


def digits_split(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``x_train, x_test, y_train, y_test``: the digits scaled to [0, 1], split in halves."""
    require_sklearn()
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    return tuple(train_test_split(x, y, test_size=0.5, random_state=seed, stratify=y))


def _model(title: str, names: list[str], layer: Layer, weights: list[np.ndarray],
           biases: list[np.ndarray], x_tr: np.ndarray, x_te: np.ndarray, y_te: np.ndarray,
           seed: int) -> DigitsModel:
    """Profile each layer's input on the training set and fix the small test set."""
    act_size, act_max, h = [], [], x_tr
    for i in range(len(weights)):
        act_size.append(int(np.prod(h.shape[1:])))
        act_max.append(float(np.max(np.abs(h))))
        h = layer(i, h, weights[i], biases[i])
    small = np.random.default_rng(seed).permutation(len(y_te))[: int(0.3 * len(y_te))]
    return DigitsModel(title, names, layer, weights, biases, x_te, y_te, np.sort(small),
                       act_size, act_max)


def _mlp_layers(n: int) -> Layer:
    def layer(i: int, h: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
        h = h @ w + b
        return h if i == n - 1 else np.maximum(h, 0, out=h)  # the last layer gives logits

    return layer


def train_digits_mlp(seed: int = 0, hidden: tuple[int, ...] = (64, 32)) -> DigitsModel:
    """Train the demo MLP (needs scikit-learn; deterministic for a given seed)."""
    require_sklearn()
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    x_tr, x_te, y_tr, y_te = digits_split(seed)
    clf = MLPClassifier(hidden_layer_sizes=hidden, max_iter=400, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(x_tr, y_tr)
    weights = [w.astype(np.float32) for w in clf.coefs_]
    biases = [b.astype(np.float32) for b in clf.intercepts_]
    title = f"digits MLP ({'-'.join(str(w.shape[0]) for w in weights)}-10)"
    return _model(title, [f"fc{i + 1}" for i in range(len(weights))], _mlp_layers(len(weights)),
                  weights,
                  biases, x_tr, x_te, y_te, seed)


def train_digits_cnn(seed: int = 0) -> DigitsModel:
    """Train the demo CNN in NumPy (needs scikit-learn for the data; deterministic)."""
    x_tr, x_te, y_tr, y_te = (a.reshape(-1, 8, 8, 1) if a.ndim == 2 else a
                              for a in digits_split(seed))
    weights, biases = cnn.train(x_tr, y_tr, seed)
    return _model("digits CNN (c3x8-pool-c3x16-fc10)", list(cnn.LAYER_NAMES), cnn.layer,
                  weights, biases, x_tr, x_te, y_te, seed)


NETWORKS: dict[str, Callable[[int], DigitsModel]] = {
    "mlp": train_digits_mlp, "cnn": train_digits_cnn}


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
    network: str
    margin: float
    method: str
    result: TuneResult
    formats: str
    param_reduction: float

    @property
    def stem(self) -> str:
        """File name stem of this run's log and configuration."""
        return _stem(self.network, self.method, self.margin)


def _stem(network: str, method: str, margin: float) -> str:
    net = "" if network == "mlp" else f"_{network}"  # the MLP keeps its original names
    return f"digits{net}_{method}_{margin:g}"


def run_demo(margins: tuple[float, ...] = (0.07, 0.01), seed: int = 0,
             out_dir: str | os.PathLike[str] | None = None, progress=None,
             network: str = "mlp", max_evaluations: int = 5000,
             model: DigitsModel | None = None) -> list[DemoRow]:
    """Tune one digits network with libnumber and Ristretto at each margin.

    ``network`` names an entry of ``NETWORKS``; a trained ``model`` may be passed instead of
    training one. Each run's CSV log goes to ``out_dir`` (``DemoRow.stem`` + ``.csv``).

    Examples
    --------
    >>> rows = run_demo((0.07,), network="cnn")  # doctest: +SKIP
    >>> [(r.method, r.formats) for r in rows]  # doctest: +SKIP
    """
    if network not in NETWORKS:
        raise ConfigError(f"network {network!r} is not one of {sorted(NETWORKS)}")
    model = model or NETWORKS[network](seed)
    platform = fpga_platform()
    rows = []
    for margin in margins:
        net = model.network(margin)
        for method in ("libnumber", "ristretto"):
            log = Path(out_dir) / f"{_stem(network, method, margin)}.csv" if out_dir else None
            if method == "libnumber":
                res = tune(net, platform, model.accuracy, log_path=log, progress=progress,
                           max_evaluations=max_evaluations)
            else:
                res = ristretto(net, model.accuracy, log_path=log, progress=progress)
            rows.append(DemoRow(network, margin, method, res, layer_formats(res.config, net),
                                param_reduction(res.config, net)))
    return rows
