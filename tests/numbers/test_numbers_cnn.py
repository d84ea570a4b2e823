"""The NumPy CNN of the digits demo: convolution against loops and finite differences, the demo."""

import numpy as np
import pytest
from click.testing import CliRunner

from npuweave.numbers import cnn


def naive_conv(x, w, b):
    """Direct "same" cross-correlation by explicit loops (an independent reference)."""
    n, h, wd, c = x.shape
    k, f = w.shape[0], w.shape[3]
    p = k // 2
    out = np.zeros((n, h, wd, f))
    for ni in range(n):
        for i in range(h):
            for j in range(wd):
                for fi in range(f):
                    s = b[fi]
                    for di in range(k):
                        for dj in range(k):
                            ii, jj = i + di - p, j + dj - p
                            if 0 <= ii < h and 0 <= jj < wd:
                                s += x[ni, ii, jj, :] @ w[di, dj, :, fi]
                    out[ni, i, j, fi] = s
    return out


def test_conv_matches_loops_on_random_data():
    rng = np.random.default_rng(1)
    x, w, b = rng.normal(size=(2, 5, 6, 3)), rng.normal(size=(3, 3, 3, 4)), rng.normal(size=4)
    np.testing.assert_allclose(cnn.conv2d(x, w, b), naive_conv(x, w, b), rtol=1e-12, atol=1e-12)


def test_conv_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    x, w, b = rng.normal(size=(2, 4, 3, 2)), rng.normal(size=(3, 3, 2, 3)), rng.normal(size=3)
    r = rng.normal(size=(2, 4, 3, 3))  # loss = sum(r * conv(x, w, b)), so dout = r
    dx, dw, db = cnn.conv2d_backward(x, w, r)
    eps = 1e-6
    for arr, grad in ((x, dx), (w, dw), (b, db)):
        num = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            old = arr[idx]
            arr[idx] = old + eps
            up = np.sum(r * cnn.conv2d(x, w, b))
            arr[idx] = old - eps
            down = np.sum(r * cnn.conv2d(x, w, b))
            arr[idx] = old
            num[idx] = (up - down) / (2 * eps)
        np.testing.assert_allclose(grad, num, rtol=1e-6, atol=1e-8)


def test_network_gradients_match_finite_differences():
    """The whole backward pass (ReLU, max-pool routing, fc) on a tiny float64 batch."""
    rng = np.random.default_rng(3)
    ws, bs = cnn.init_params(0, channels=(2, 3))
    ws = [w.astype(np.float64) for w in ws]
    bs = [rng.normal(scale=0.1, size=b.shape) for b in bs]
    x, y = rng.uniform(size=(3, 8, 8, 1)), np.array([0, 4, 9])
    _, dws, dbs = cnn.gradients(ws, bs, x, y)
    eps = 1e-6
    for arr, grad in zip(ws + bs, dws + dbs, strict=True):
        for flat in rng.choice(arr.size, size=min(arr.size, 12), replace=False):
            idx = np.unravel_index(flat, arr.shape)
            old = arr[idx]
            arr[idx] = old + eps
            up = cnn.gradients(ws, bs, x, y)[0]
            arr[idx] = old - eps
            down = cnn.gradients(ws, bs, x, y)[0]
            arr[idx] = old
            assert grad[idx] == pytest.approx((up - down) / (2 * eps), rel=1e-4, abs=1e-7)


def test_training_is_deterministic_and_learns():
    rng = np.random.default_rng(4)
    x = rng.uniform(size=(64, 8, 8, 1)).astype(np.float32)
    y = (x[:, :4].sum(axis=(1, 2, 3)) > x[:, 4:].sum(axis=(1, 2, 3))).astype(int)
    w1, _ = cnn.train(x, y, seed=5, epochs=2)
    w2, _ = cnn.train(x, y, seed=5, epochs=2)
    assert all(np.array_equal(a, b) for a, b in zip(w1, w2, strict=True))
    ws, bs = cnn.init_params(5)
    assert cnn.gradients(ws, bs, x, y)[0] > cnn.gradients(*cnn.train(x, y, seed=5), x, y)[0]


@pytest.fixture(scope="module")
def digits_cnn():
    pytest.importorskip("sklearn")
    from npuweave.numbers.demo import train_digits_cnn

    return train_digits_cnn(0)


def test_digits_cnn_learned(digits_cnn):
    from npuweave.numbers import NumberConfig

    assert digits_cnn.accuracy(NumberConfig({}), "full") > 0.9
    assert digits_cnn.act_size == [64, 128, 256]


def test_demo_cnn_at_a_tiny_budget_meets_its_threshold(digits_cnn, tmp_path):
    from npuweave.numbers.demo import run_demo

    rows = run_demo((0.07,), out_dir=tmp_path, network="cnn", max_evaluations=25,
                    model=digits_cnn)
    assert [r.method for r in rows] == ["libnumber", "ristretto"]
    for r in rows:
        acc = digits_cnn.accuracy(r.result.config, "full")  # re-measured, not the tuner's memo
        assert acc == r.result.accuracy >= r.result.threshold
        assert r.result.threshold == pytest.approx(r.result.baseline_accuracy * 0.93)
        assert r.param_reduction >= 1
        assert (tmp_path / f"{r.stem}.csv").exists()
    assert rows[0].result.stopped_early and rows[0].result.iterations <= 26


def test_cli_demo_cnn_and_unknown_network():
    pytest.importorskip("sklearn")
    from npuweave.cli.numbers import numbers

    res = CliRunner().invoke(numbers, ["demo", "--network", "cnn", "--margin", "0.07"])
    assert res.exit_code == 0, res.output
    assert "digits CNN" in res.output and "libnumber" in res.output
    assert "digits MLP" not in res.output
    bad = CliRunner().invoke(numbers, ["demo", "--network", "resnet"])
    assert bad.exit_code == 2 and "resnet" in bad.output
