"""SCALE-Sim v3's access counters of the zoo's ResNet-50 and BERT-base layers (golden numbers).

Source: ``scalesim==3.0.0`` in a scratch venv (not a dependency), run on 2026-11-27 by
``benchmarks/scalesim_energy_crosscheck.py`` on its 128x128 weight-stationary config (8 MiB per
SRAM, 160 words per cycle of DRAM and SRAM-bank bandwidth), one topology row per distinct layer
shape as ``topology_rows`` writes it (all 31 distinct shapes of the two models); the six
numbers are the columns of SCALE-Sim's ``DETAILED_ACCESS_REPORT.csv``, summed over the
per-head layers SCALE-Sim makes of a ``DP`` row.
"""

from __future__ import annotations

import pytest

from npuweave.cost import profile_model
from npuweave.cost.energy import Accesses

CFG = """[general]
run_name = x
[architecture_presets]
ArrayHeight: 128
ArrayWidth: 128
IfmapSramSzkB: 8192
FilterSramSzkB: 8192
OfmapSramSzkB: 8192
Bandwidth: 160
Dataflow: ws
[run_presets]
InterfaceBandwidth: USER
"""

# layer -> (ifmap_sram_reads, filter_sram_reads, ofmap_sram_writes,
#           dram_ifmap_reads, dram_filter_reads, dram_ofmap_writes)
RESNET50 = {
    "conv1": (1843968, 9408, 1605632, 3211360, 18880, 1605632),
    "layer1.0/conv1": (200704, 4096, 200704, 401440, 8320, 200704),
    "layer1.0/conv2": (1806336, 36864, 1003520, 2007040, 73760, 1003520),
    "layer1.0/conv3": (401408, 16384, 802816, 401440, 16480, 802816),
    "layer1.1/conv1": (802816, 16384, 401408, 802880, 32800, 401408),
    "layer2.0/conv1": (802816, 32768, 802816, 802880, 32800, 802816),
    "layer2.0/conv2": (903168, 147456, 903168, 903200, 147520, 903168),
    "layer2.0/conv3": (401408, 65536, 401408, 100480, 65600, 401408),
    "layer2.0/downsample": (802816, 131072, 802816, 200800, 131200, 802816),
    "layer2.1/conv1": (401408, 65536, 401408, 401440, 65600, 401408),
    "layer2.1/conv2": (903168, 147456, 903168, 903200, 147520, 903168),
    "layer3.0/conv1": (802816, 131072, 802816, 401440, 131200, 802816),
    "layer3.0/conv2": (903168, 589824, 903168, 451680, 589920, 903168),
    "layer3.0/conv3": (401408, 262144, 401408, 50240, 262240, 401408),
    "layer3.0/downsample": (802816, 524288, 802816, 100480, 524320, 802816),
    "layer3.1/conv1": (401408, 262144, 401408, 200800, 262240, 401408),
    "layer3.1/conv2": (903168, 589824, 903168, 451680, 589920, 903168),
    "layer4.0/conv1": (802816, 524288, 802816, 200800, 524320, 802816),
    "layer4.0/conv2": (903168, 2359296, 903168, 225920, 2359360, 903168),
    "layer4.0/conv3": (401408, 1048576, 401408, 25120, 1048640, 401408),
    "layer4.0/downsample": (802816, 2097152, 802816, 50240, 2097280, 802816),
    "layer4.1/conv1": (401408, 1048576, 401408, 100480, 1048640, 401408),
    "layer4.1/conv2": (903168, 2359296, 903168, 225920, 2359360, 903168),
    "fc": (16384, 2048000, 16000, 2080, 2097280, 16000),
}
BERT_BASE = {
    "layer0/qkv": (1769472, 1769472, 1769472, 98400, 1769600, 1769472),
    "layer0/matmul": (98304, 98304, 196608, 197760, 99840, 196608),
    "layer0/matmul_1": (196608, 98304, 98304, 197760, 197760, 98304),
    "layer0/attn_out": (589824, 589824, 589824, 98400, 589920, 589824),
    "layer0/ffn1": (2359296, 2359296, 2359296, 98400, 2359360, 2359296),
    "layer0/ffn2": (2359296, 2359296, 2359296, 393280, 2359360, 2359296),
    "pooler/dense": (4608, 589824, 4608, 800, 589920, 4608),
}


@pytest.fixture(scope="module")
def counts(tmp_path_factory):
    cfg = tmp_path_factory.mktemp("cfg") / "x.cfg"
    cfg.write_text(CFG)
    out = {}
    for model in ("resnet50", "bert-base"):
        prof = profile_model(model, str(cfg))
        out.update(zip(prof.names, prof.accesses(), strict=True))
    return out


@pytest.mark.parametrize("layer", [*RESNET50, *BERT_BASE])
def test_counters_equal_scalesim(counts, layer):
    golden = {**RESNET50, **BERT_BASE}[layer]
    assert counts[layer] == Accesses(*golden)
