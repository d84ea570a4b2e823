"""NCF: Neural Collaborative Filtering (NeuMF, He et al., 2017) as in the MLPerf reference.

Assumptions
-----------
* Dataset sizes of MovieLens-20M, the MLPerf recommendation benchmark: 138,493 users and
  26,744 items.
* NeuMF with 64 predictive factors for the GMF path and MLP layer sizes 256-256-128-64:
  the MLP path's user and item embeddings have 128 dimensions each (half of the first
  layer), followed by FC 256 -> 256 -> 128 -> 64 with ReLU; the GMF path multiplies 64-wide
  user and item embeddings elementwise; the two 64-wide results are concatenated and a final
  FC 128 -> 1 with a sigmoid gives the score.
* One sample is one (user, item) pair. The four embedding tables are weights
  (~31.7 M of the ~31.8 M parameters) stored in DRAM, but a sample reads only one row of
  each (``Gather``), so NCF's cost per sample is dominated by the MLP weights: it is the
  most memory-bound model of the zoo (~0.1 M MACs per sample).
"""

from __future__ import annotations

from npuweave.workload.graph import Graph
from npuweave.workload.zoo.builder import GraphBuilder

ML20M_USERS, ML20M_ITEMS = 138_493, 26_744
GMF_FACTORS = 64
MLP_SIZES = (256, 256, 128, 64)


def ncf() -> Graph:
    """NeuMF on MovieLens-20M sizes (~31.8 M parameters, ~0.1 M MACs per pair).

    Examples
    --------
    >>> g = ncf()
    >>> g.tensors[g.outputs[0]].shape
    (1, 1)
    """
    b = GraphBuilder("ncf")
    user = b.input("user", (1,), "int64")
    item = b.input("item", (1,), "int64")
    gmf = b.mul(b.embedding(user, ML20M_USERS, GMF_FACTORS, name="mf_user"),
                b.embedding(item, ML20M_ITEMS, GMF_FACTORS, name="mf_item"))
    half = MLP_SIZES[0] // 2
    x = b.concat([b.embedding(user, ML20M_USERS, half, name="mlp_user"),
                  b.embedding(item, ML20M_ITEMS, half, name="mlp_item")], axis=1)
    for i, n in enumerate(MLP_SIZES[1:]):
        x = b.relu(b.gemm(x, n, name=f"mlp{i}"))
    y = b.gemm(b.concat([gmf, x], axis=1), 1, name="final")
    return b.finish([b.unary("Sigmoid", y)])
