"""The front door of the emitter: a model and a mesh NPU in, a validated Gemini IR out.

``compile_multicore`` runs the passes in order: ``plan`` (layer groups split across cores,
tiles sized to the L2), ``emit`` (the IR in the published format) and, unless told not to,
``validate`` (the emitter's own output must have zero violations).
"""

from __future__ import annotations

import re
from dataclasses import replace

from npuweave.compile.gemini.emit import emit
from npuweave.compile.gemini.mapping import plan
from npuweave.compile.gemini.model import IR
from npuweave.compile.gemini.validate import validate
from npuweave.errors import ConfigError, NpuweaveError
from npuweave.hardware import NPU
from npuweave.workload.layer import Layer

_MESH = re.compile(r"^\s*(\d+)\s*[xX*]\s*(\d+)\s*$")


#: Most cores one compilation spreads over (Gemini's meshes go to 8x8).
MAX_CORES = 1024


def parse_mesh(text: str) -> tuple[int, int]:
    """``"2x2"`` -> ``(xlen, ylen)``.

    Examples
    --------
    >>> parse_mesh("4x2")
    (4, 2)
    """
    m = _MESH.match(text) if len(text) < 40 else None
    if m is None or int(m.group(1)) < 1 or int(m.group(2)) < 1:
        raise ConfigError(f"mesh {text!r} not understood; write XxY with positive integers, "
                          "e.g. --mesh 2x2")
    return int(m.group(1)), int(m.group(2))


def multicore_npu(npu: NPU, cores: int, mesh: tuple[int, int],
                  dram_bw: float | None = None) -> NPU:
    """``npu`` with ``cores`` cores on an ``xlen`` x ``ylen`` mesh (checked) and a DRAM bandwidth."""
    if not 1 <= cores <= MAX_CORES:
        raise ConfigError(f"--cores must be from 1 to {MAX_CORES}, got {cores} (the compiler "
                          "and the replay grow with the square of the core count)")
    if mesh[0] * mesh[1] != cores:
        raise ConfigError(f"a {mesh[0]}x{mesh[1]} mesh holds {mesh[0] * mesh[1]} cores, not "
                          f"{cores}; give e.g. --cores {mesh[0] * mesh[1]} or a matching --mesh")
    if (npu.l2_bytes or npu.lmem_bytes) <= 0:
        raise ConfigError(f"NPU {npu.name!r} has no per-core L2 (l2_bytes); use --npu "
                          "gemini-like or set l2_bytes in the NPU spec")
    if cores > 1 and npu.noc_bw <= 0:
        raise ConfigError(f"NPU {npu.name!r} has no mesh links (noc_bw); use --npu gemini-like "
                          "or set noc_bw in the NPU spec")
    return replace(npu, cores=cores, mesh=(mesh[1], mesh[0]),
                   dram_bw=npu.dram_bw if dram_bw is None else dram_bw)


def compile_multicore(layers: tuple[Layer, ...] | list[Layer], npu: NPU, *, batch: int = 1,
                      check: bool = True) -> IR:
    """A multi-core Gemini IR of ``layers`` on ``npu`` (``npu.cores`` on ``npu.mesh``).

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload import load_layers
    >>> ir = compile_multicore(load_layers("resnet50"), preset("gemini-like"), batch=4)  # doctest: +SKIP
    >>> len(ir.cores), ir.xlen, ir.ylen  # doctest: +SKIP
    (4, 2, 2)
    """
    rows, cols = npu.mesh
    if rows * cols != npu.cores:
        raise ConfigError(f"NPU {npu.name!r}: mesh {list(npu.mesh)} holds {rows * cols} cores, "
                          f"not {npu.cores}")
    ir = emit(plan(layers, npu, npu.cores, batch), npu, cols, rows)
    if check:
        bad = validate(ir)
        if bad:
            raise NpuweaveError(f"internal error: the emitted IR has {len(bad)} violation(s), "
                                f"first: {bad[0]}; please report it")
    return ir
