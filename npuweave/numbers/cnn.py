"""A small convolutional network in plain NumPy, for the digits demo.

``conv1`` 3x3x8 (same padding) -> ReLU -> 2x2 max-pool -> ``conv2`` 3x3x16 -> ReLU -> flatten
-> ``fc1`` 256x10, on 8x8 single-channel images in NHWC layout. Convolution is im2col (a
strided window view, then one matrix product); the backward pass scatters the column
gradient back with nine shifted adds. Training is Adam on the softmax cross-entropy with a
fixed seed, so a given seed always gives the same weights.

Weights are ``HWIO`` arrays (``(3, 3, C_in, C_out)``) for the convolutions and ``(in, out)``
for the fully connected layer; ``layer(i, h, w, b)`` applies layer ``i`` alone, which is what
the demo needs to quantize each layer's input and weights in between.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

LAYER_NAMES = ["conv1", "conv2", "fc1"]


def im2col(x: np.ndarray, k: int = 3) -> np.ndarray:
    """``(N, H, W, C)`` -> ``(N*H*W, C*k*k)`` patches of the zero-padded ("same") input."""
    p = k // 2
    xp = np.pad(x, ((0, 0), (p, p), (p, p), (0, 0)))
    cols = sliding_window_view(xp, (k, k), axis=(1, 2))  # (N, H, W, C, k, k)
    return cols.reshape(-1, x.shape[3] * k * k)


def _wmat(w: np.ndarray) -> np.ndarray:
    """HWIO weights as the ``(C*k*k, F)`` matrix that matches ``im2col``'s column order."""
    return w.transpose(2, 0, 1, 3).reshape(-1, w.shape[3])


def conv2d(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Stride-1 "same" convolution (cross-correlation) of NHWC ``x`` with HWIO ``w``.

    Examples
    --------
    >>> x = np.ones((1, 4, 4, 1)); w = np.ones((3, 3, 1, 1))
    >>> conv2d(x, w, np.zeros(1))[0, :, :, 0]
    array([[4., 6., 6., 4.],
           [6., 9., 9., 6.],
           [6., 9., 9., 6.],
           [4., 6., 6., 4.]])
    """
    n, h, wd, _ = x.shape
    return (im2col(x, w.shape[0]) @ _wmat(w) + b).reshape(n, h, wd, w.shape[3])


def conv2d_backward(x: np.ndarray, w: np.ndarray, dout: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients ``(dx, dw, db)`` of ``conv2d(x, w, b)`` given ``dout`` (its output gradient)."""
    k, c, f = w.shape[0], w.shape[2], w.shape[3]
    n, h, wd, _ = x.shape
    d2 = dout.reshape(-1, f)
    dw = (im2col(x, k).T @ d2).reshape(c, k, k, f).transpose(1, 2, 0, 3)
    dcols = (d2 @ _wmat(w).T).reshape(n, h, wd, c, k, k)
    p = k // 2
    dxp = np.zeros((n, h + 2 * p, wd + 2 * p, c), dtype=dout.dtype)
    for i in range(k):  # col2im: each kernel tap reads a shifted copy of the input
        for j in range(k):
            dxp[:, i:i + h, j:j + wd, :] += dcols[..., i, j]
    return dxp[:, p:p + h, p:p + wd, :], dw, d2.sum(axis=0)


def maxpool2(x: np.ndarray) -> np.ndarray:
    n, h, w, c = x.shape
    return x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def _maxpool2_backward(x: np.ndarray, out: np.ndarray, dout: np.ndarray) -> np.ndarray:
    up = np.repeat(np.repeat(out, 2, axis=1), 2, axis=2)
    mask = x == up
    # ties share nothing: only the first maximum of each window takes the gradient
    n, h, w, c = x.shape
    m = mask.reshape(n, h // 2, 2, w // 2, 2, c).transpose(0, 1, 3, 5, 2, 4).reshape(-1, 4)
    first = np.zeros_like(m)
    first[np.arange(len(m)), m.argmax(axis=1)] = True
    first = first.reshape(n, h // 2, w // 2, c, 2, 2).transpose(0, 1, 4, 2, 5, 3)
    return first.reshape(x.shape) * np.repeat(np.repeat(dout, 2, axis=1), 2, axis=2)


def layer(i: int, h: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Apply layer ``i`` (0: conv1+ReLU+pool, 1: conv2+ReLU, 2: flatten+fc1 logits)."""
    if i == 0:
        return maxpool2(np.maximum(conv2d(h, w, b), 0))
    if i == 1:
        return np.maximum(conv2d(h, w, b), 0)
    return h.reshape(len(h), -1) @ w + b


def init_params(seed: int, channels: tuple[int, int] = (8, 16), size: int = 8,
                classes: int = 10) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """He-initialized weights and zero biases for an ``size`` x ``size`` one-channel input."""
    rng = np.random.default_rng(seed)
    c1, c2 = channels
    shapes = [(3, 3, 1, c1), (3, 3, c1, c2), ((size // 2) ** 2 * c2, classes)]
    fan_in = [9, 9 * c1, shapes[2][0]]
    weights = [(rng.standard_normal(s) * np.sqrt(2 / f)).astype(np.float32)
               for s, f in zip(shapes, fan_in, strict=True)]
    return weights, [np.zeros(s[-1], np.float32) for s in shapes]


def gradients(weights: list[np.ndarray], biases: list[np.ndarray], x: np.ndarray,
              y: np.ndarray) -> tuple[float, list[np.ndarray], list[np.ndarray]]:
    """Mean cross-entropy loss and its gradients for a batch (NHWC ``x``, integer ``y``)."""
    (w1, w2, w3), (b1, b2, b3) = weights, biases
    z1 = conv2d(x, w1, b1)
    a1 = np.maximum(z1, 0)
    p1 = maxpool2(a1)
    z2 = conv2d(p1, w2, b2)
    a2 = np.maximum(z2, 0)
    logits = a2.reshape(len(x), -1) @ w3 + b3
    logits = logits - logits.max(axis=1, keepdims=True)
    prob = np.exp(logits)
    prob /= prob.sum(axis=1, keepdims=True)
    loss = float(-np.mean(np.log(prob[np.arange(len(y)), y] + 1e-12)))
    dlog = prob
    dlog[np.arange(len(y)), y] -= 1
    dlog /= len(y)
    dw3, db3 = a2.reshape(len(x), -1).T @ dlog, dlog.sum(axis=0)
    da2 = (dlog @ w3.T).reshape(a2.shape) * (z2 > 0)
    dp1, dw2, db2 = conv2d_backward(p1, w2, da2)
    da1 = _maxpool2_backward(a1, p1, dp1) * (z1 > 0)
    _, dw1, db1 = conv2d_backward(x, w1, da1)
    return loss, [dw1, dw2, dw3], [db1, db2, db3]


def train(x: np.ndarray, y: np.ndarray, seed: int = 0, epochs: int = 30, batch: int = 32,
          lr: float = 3e-3) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Train the CNN with Adam on NHWC ``x`` (float32) and integer labels ``y``.

    Deterministic for a given seed (initialization and minibatch order both come from it).
    """
    weights, biases = init_params(seed)
    params = weights + biases
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    rng = np.random.default_rng(seed + 1)
    b1, b2, t = 0.9, 0.999, 0
    for _ in range(epochs):
        order = rng.permutation(len(x))
        for start in range(0, len(x), batch):
            idx = order[start:start + batch]
            _, dws, dbs = gradients(weights, biases, x[idx], y[idx])
            t += 1
            for p, g, mi, vi in zip(params, dws + dbs, m, v, strict=True):
                mi += (1 - b1) * (g - mi)
                vi += (1 - b2) * (g * g - vi)
                p -= (lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
                      * mi / (np.sqrt(vi) + 1e-8)).astype(p.dtype)
    return weights, biases
