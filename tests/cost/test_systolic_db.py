"""``systolic-ws-db``: weight-stationary with double-buffered weights, against hand counts."""

from hypothesis import given
from hypothesis import strategies as st

from npuweave.cost import layer_cost
from npuweave.cost.systolic import gemm_cycles, gemm_cycles_db
from npuweave.hardware import NPU, preset
from npuweave.workload.layer import Layer, LayerKind


def fc(m: int, k: int, n: int, count: int = 1) -> Layer:
    return Layer("fc", LayerKind.GEMM, ("Gemm",), (count, m, k, n), count * m * k * n, 0, k * n,
                 m * k, m * n)


def npu(rows: int, cols: int, arrays: int = 1) -> NPU:
    return NPU(name="t", pe_rows=rows, pe_cols=cols, arrays=arrays, clock_hz=1e9, dram_bw=1e9,
               weight_buffer=1 << 30, act_buffer=1 << 30)


def test_hand_counts():
    # 4x4 array, m=10, k=9, n=6: 3 x 2 = 6 folds. Each fold streams 10 rows (> 4-cycle weight
    # shift, so the shift hides); add one first load (4), skew (3) and drain (3), minus one.
    assert gemm_cycles_db(fc(10, 9, 6), npu(4, 4)) == 6 * 10 + 4 + 3 + 3 - 1
    # m=2 < R=4: every fold waits for the next fold's 4-cycle weight shift.
    assert gemm_cycles_db(fc(2, 9, 6), npu(4, 4)) == 6 * 4 + 4 + 3 + 3 - 1
    # two arrays share 6 folds: 3 rounds
    assert gemm_cycles_db(fc(10, 9, 6), npu(4, 4, arrays=2)) == 3 * 10 + 4 + 3 + 3 - 1


def test_single_fold_equals_scalesim():
    layer, n = fc(50, 3, 3), npu(4, 4)
    assert gemm_cycles_db(layer, n) == gemm_cycles(layer, n) == 2 * 4 + 4 + 50 - 2 - 1


@given(m=st.integers(1, 300), k=st.integers(1, 600), n=st.integers(1, 600),
       count=st.integers(1, 4), rows=st.sampled_from([4, 8, 32, 128]),
       cols=st.sampled_from([4, 16, 128]), arrays=st.integers(1, 3))
def test_never_slower_than_scalesim_never_faster_than_peak(m, k, n, count, rows, cols, arrays):
    layer, spec = fc(m, k, n, count), npu(rows, cols, arrays)
    db = gemm_cycles_db(layer, spec)
    assert db <= gemm_cycles(layer, spec)
    assert db >= count * m * k * n / (rows * cols * arrays) - 1


def test_registered_and_faster_on_bert_like_layer():
    layer = fc(128, 768, 3072)  # a BERT-base FFN at seq 128
    ws = layer_cost(layer, preset("memory-centric"), model="systolic-ws")
    db = layer_cost(layer, preset("memory-centric"), model="systolic-ws-db")
    assert db.compute_s < ws.compute_s and db.dram_bytes == ws.dram_bytes
