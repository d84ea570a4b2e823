"""Consistency checks of a Gemini IR, run as a list of named passes.

Every check is a function ``(Index) -> Iterator[Violation]``; :func:`validate` runs them all
(or the named ones) and returns every violation at once, each with its JSON path. The
published files' quirks (ofmap entries in the L2 snapshot, DRAM destinations without
workload ids, 16-bit fmaps without a recorded bit width, ...) are accepted; see
docs/GEMINI_IR.md for the list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from npuweave.compile.gemini import checks_buffer as cb
from npuweave.compile.gemini import checks_links as cl
from npuweave.compile.gemini import checks_space as cs
from npuweave.compile.gemini.index import Index, Violation
from npuweave.compile.gemini.model import IR
from npuweave.errors import unknown_name

Check = Callable[[Index], Iterator[Violation]]

#: check name -> check, in the order they run
CHECKS: dict[str, Check] = {
    "header": cb.check_header,
    "transfer-unique": cl.check_transfer_unique,
    "transfer-dangling": cl.check_transfer_dangling,
    "dram-store": cl.check_dram_store,
    "related-mutual": cl.check_related_mutual,
    "destination": cl.check_destination,
    "box-order": cs.check_box_order,
    "box-outside": cs.check_box_outside,
    "ifmap-coverage": cs.check_ifmap_coverage,
    "buffer-source": cs.check_buffer_source,
    "size": cs.check_size,
    "buffer-overlap": cb.check_buffer_overlap,
    "buffer-capacity": cb.check_buffer_capacity,
    "newly-added": cb.check_newly_added,
    "cur-wl-ifmap": cb.check_cur_wl_ifmap,
    "workload-order": cb.check_workload_order,
    "ofmap-size": cb.check_ofmap_size,
    "tile-coverage": cb.check_tile_coverage,
}


def validate(ir: IR, checks: Iterable[str] | None = None) -> list[Violation]:
    """Run the consistency checks and return every violation (empty when the IR is clean).

    Parameters
    ----------
    ir : IR
        A loaded IR.
    checks : names from :data:`CHECKS`, optional
        Run only these; all by default.

    Examples
    --------
    >>> from npuweave.compile.gemini import load
    >>> ir = load("int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json")  # doctest: +SKIP
    >>> validate(ir)  # doctest: +SKIP
    []
    """
    names = list(CHECKS) if checks is None else list(checks)
    for name in names:
        if name not in CHECKS:
            raise unknown_name("IR check", name, list(CHECKS))
    ix = Index(ir)
    return [v for name in names for v in CHECKS[name](ix)]


def check_docs() -> dict[str, str]:
    """Check name -> first docstring line (for ``npuweave ir validate --list``)."""
    return {name: (fn.__doc__ or "").strip().splitlines()[0] for name, fn in CHECKS.items()}
