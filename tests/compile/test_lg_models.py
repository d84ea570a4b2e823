"""End to end on ResNet-50, MobileNetV2 (zoo) and VGG-19 (onnx's light model) on lmem-16m."""

import dataclasses
import os

import onnx
import pytest
from lg_checks import check_buffers, check_slices

from npuweave.compile.layergroup import GroupStatus, compile_groups
from npuweave.compile.layergroup.tensors import analyze_layers
from npuweave.hardware import preset
from npuweave.workload import load_layers

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
VGG19 = os.path.join(LIGHT, "light_vgg19.onnx")
NPU = preset("lmem-16m")


def check_plan(plan, layers, npu):
    assert [n for g in plan.groups for n in g.layers] == [layer.name for layer in layers]
    view = analyze_layers(layers)
    for g in plan.groups:
        if g.status is GroupStatus.GROUPED:
            check_buffers(g, npu.lmem_bytes)
            check_slices(g, view, npu.element_bytes)


@pytest.mark.parametrize("spec", ["resnet50", "mobilenetv2", VGG19])
@pytest.mark.parametrize("method", ["greedy", "dp"])
def test_groups_cut_dram_traffic(spec, method):
    layers = load_layers(spec)
    plan = compile_groups(layers, NPU, method=method)
    check_plan(plan, layers, NPU)
    assert any(len(g.layers) > 1 for g in plan.groups)
    assert plan.dram_bytes < plan.baseline_dram_bytes
    assert plan.cycles < plan.baseline_cycles


def test_resnet50_batch1_is_one_group_with_hand_counted_traffic():
    # At batch 1 every layer's weights are live only one step ahead of its compute, so the
    # whole network fits 16 MiB unsliced: DRAM = every weight once + the image + the logits.
    layers = load_layers("resnet50")
    plan = compile_groups(layers, NPU, method="dp")
    (g,) = plan.groups
    weights = sum(layer.weight_elems for layer in layers)  # 25.5 M parameters
    assert plan.dram_bytes == 2 * (weights + 3 * 224 * 224 + 1000)
    # layer by layer, unsliced, every layer would move its weights, inputs and output, except
    # that the three 1x1 stride-2 downsample convs never read their input's last row:
    # 256*56 + 512*28 + 1024*14 = 3 * 14336 elements. Each layer now runs at its cheapest
    # slicing: H-sliced 3x3/7x7 convs re-read halo rows (layer1.0/conv2 in 3 slices reads
    # 19 + 21 + 20 = 60 of 56 rows: +4 * 64 * 56 * 2 = 28672 B) and a sliced downsample skips
    # one row per slice, a few hundred kB either way on 104 MB.
    per_layer = 2 * (sum(x.weight_elems + x.in_elems + x.out_elems for x in layers) - 3 * 14336)
    assert plan.baseline_dram_bytes == pytest.approx(per_layer, rel=0.01)


def test_vgg19_fc_weights_stream_ungrouped():
    # fc6 (25088 x 4096) and fc7 (4096 x 4096) weights are 205 MB and 34 MB: larger than LMEM
    plan = compile_groups(load_layers(VGG19), NPU, method="dp")
    forced = [g for g in plan.groups if "do not fit" in g.reason]
    assert len(forced) == 2 and all(g.status is GroupStatus.UNGROUPED for g in forced)


def test_small_lmem_slices_resnet50_along_h():
    npu = dataclasses.replace(NPU, lmem_bytes=2 << 20)
    layers = load_layers("resnet50")
    plan = compile_groups(layers, npu, method="dp", batch=2)
    check_plan(plan, layers, npu)
    assert any(g.h_slices > 1 and len(g.layers) > 1 for g in plan.groups)
    assert plan.dram_bytes < plan.baseline_dram_bytes


def test_dp_never_slower_than_greedy():
    layers = load_layers("mobilenetv2")
    npu = dataclasses.replace(NPU, lmem_bytes=2 << 20)
    greedy = compile_groups(layers, npu, method="greedy", batch=4)
    dp = compile_groups(layers, npu, method="dp", batch=4)
    assert dp.seconds <= greedy.seconds
