"""Gemini multi-core scheduler IR: read, write, validate, summarize, simulate, visualize.

The published Gemini files (e.g. ResNet-34 at batch 1 and 4) differ from the format
document in places; the reader accepts them as they are and the validator knows their
quirks (docs/GEMINI_IR.md).

Examples
--------
>>> from npuweave.compile import gemini
>>> ir = gemini.load("int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json")  # doctest: +SKIP
>>> gemini.validate(ir)  # doctest: +SKIP
[]
>>> gemini.simulate(ir, dram_bw=16e9).makespan  # doctest: +SKIP
0.0020033...
"""

from typing import TYPE_CHECKING

from npuweave.compile.gemini import model as _model
from npuweave.compile.gemini.index import Violation
from npuweave.compile.gemini.model import *  # noqa: F403 (the IR node types, model.__all__)
from npuweave.compile.gemini.reader import from_dict, load, loads
from npuweave.compile.gemini.summary import Summary, summarize
from npuweave.compile.gemini.validate import CHECKS, validate
from npuweave.compile.gemini.writer import dump, dumps, to_dict

if TYPE_CHECKING:  # the names below load lazily (see _LAZY); type checkers see them here
    from npuweave.compile.gemini.multicore import compile_multicore
    from npuweave.compile.gemini.replay import ReplayResult, Span, simulate
    from npuweave.compile.gemini.timeline import plot_timeline, trace_events, write_trace

# The replay (event loop of npuweave.sim), the pictures (matplotlib through npuweave.report)
# and the emitter (layer-group compiler, cost models) load on first use, so reading and
# validating a file (`npuweave ir validate`) does not pay for them.
_LAZY = {
    "ReplayResult": "replay", "Span": "replay", "simulate": "replay",
    "plot_timeline": "timeline", "trace_events": "timeline", "write_trace": "timeline",
    "compile_multicore": "multicore",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        module = importlib.import_module(f"npuweave.compile.gemini.{_LAZY[name]}")
        value = getattr(module, name)
        globals()[name] = value  # loaded once; later lookups skip this function
        return value
    raise AttributeError(f"module 'npuweave.compile.gemini' has no attribute {name!r}")

__all__ = [
    *_model.__all__, "CHECKS", "ReplayResult", "Span", "Summary", "Violation",
    "compile_multicore", "dump", "dumps", "from_dict", "load", "loads", "plot_timeline",
    "simulate", "summarize", "to_dict", "trace_events", "validate", "write_trace",
]
