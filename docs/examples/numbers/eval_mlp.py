"""Evaluation command for the `npuweave numbers tune` example: a small MLP whose layers are
named like NCF's (mlp0, mlp1, mlp2). It reads the trial configuration named by
$NUMBER_CONFIG, quantizes the weights and prints how often the quantized MLP agrees with the
float one ("Accuracy: 0.9825"). Replace it with your framework's test run."""
import os

import numpy as np

from npuweave.numbers import parse_config, quantize

cfg = parse_config(os.environ["NUMBER_CONFIG"], register=False)
rng = np.random.default_rng(0)
x = rng.standard_normal((400, 32)).astype(np.float32)
shapes = {"mlp0": (32, 16), "mlp1": (16, 8), "mlp2": (8, 4)}
weights = {n: rng.standard_normal(s).astype(np.float32) / np.sqrt(s[0]) for n, s in shapes.items()}


def predict(ws):
    h = x
    for i, w in enumerate(ws.values()):
        h = h @ w if i == len(ws) - 1 else np.maximum(h @ w, 0)
    return h.argmax(axis=1)


quantized = {n: quantize(w, cfg[f"{n}.weight"]) if f"{n}.weight" in cfg else w
             for n, w in weights.items()}
print(f"Accuracy: {np.mean(predict(quantized) == predict(weights)):.4f}")
