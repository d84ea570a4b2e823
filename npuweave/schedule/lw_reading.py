"""Four ways to read Layerweaver's idle-time rules (thesis IV.4), as named options.

The thesis prints formulas for the idle times of a candidate layer ``L`` on schedule ``S``
(``S'`` is the schedule with ``L`` appended) and describes the selection in words. Four points
admit two readings each; ``Reading`` names one choice per point:

1. ``memory_idle`` -- the memory idle time a decision causes.
   ``"printed"``: ``fetch(S'[t_m], S[t_c]) / MemBW`` (the formula in IV.4).
   ``"excess"``: ``max(0, inh + F/MemBW) - max(0, inh)``, the part of the DMA's real idle time
   during ``L`` beyond the layer's inherent share ``inh = L[comp] - (BufSize - L[size])/MemBW``
   (zero whenever the layer leaves buffer room to spare).
2. ``compute_idle`` -- the PE's wait for ``L``'s weights.
   ``"printed"``: ``L[size]/MemBW - (S[t_c] - S[t_m])`` (fetch from ``S[t_m]``, no stall).
   ``"exact"``: ``S'[t_m] - S[t_c]``, which also counts a stall for buffer space.
3. ``starvation`` -- when "all candidates incur memory idle time" (then serve the
   memory-intensive model). ``"caused"``: the decision's memory idle (item 1) is positive;
   ``"incurred"``: the inherent plus caused idle ``inh + F/MemBW`` is positive.
4. ``tie_scope`` -- where the "no inherent memory idle" preference applies. ``"zero"``: among
   candidates tied at zero total idle, as printed; ``"all"``: among every tie at the minimum.

``PRINTED`` is the thesis's text, the default; ``NPUWEAVE`` is the reading npuweave used before
these options existed (and the one the compiled kernel implements). The functions here are
pure: the policy feeds them the board's numbers.

Examples
--------
>>> Reading().memory_idle, NPUWEAVE.memory_idle
('printed', 'excess')
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from npuweave.errors import ConfigError

CHOICES = {
    "memory_idle": ("printed", "excess"),
    "compute_idle": ("printed", "exact"),
    "starvation": ("caused", "incurred"),
    "tie_scope": ("zero", "all"),
}


@dataclass(frozen=True, slots=True)
class Reading:
    """One choice per ambiguous point of IV.4 (see the module docstring); defaults: printed."""

    memory_idle: str = "printed"
    compute_idle: str = "printed"
    starvation: str = "caused"
    tie_scope: str = "zero"

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value not in CHOICES[f.name]:
                raise ConfigError(f"layerweaver option {f.name!r} must be one of "
                                  f"{', '.join(CHOICES[f.name])}; got {value!r}")


PRINTED = Reading()
NPUWEAVE = Reading("excess", "exact", "incurred", "all")
#: Named bundles accepted by ``Layerweaver(reading=...)``.
READINGS = {"printed": PRINTED, "npuweave": NPUWEAVE}


def compute_idle(r: Reading, t_m: float, t_c: float, ftime: float, fe: float) -> float:
    """Compute idle of a candidate: ``ftime = L[size]/MemBW``, ``fe = S'[t_m]``.

    Examples
    --------
    >>> compute_idle(PRINTED, 0.0, 1.0, 3.0, 5.0), compute_idle(NPUWEAVE, 0.0, 1.0, 3.0, 5.0)
    (2.0, 4.0)
    """
    wait = (t_m + ftime - t_c) if r.compute_idle == "printed" else (fe - t_c)
    return wait if wait > 0.0 else 0.0


def memory_idle(r: Reading, inh: float, fetched_s: float) -> tuple[float, float]:
    """``(charged, incurred)``: the decision's memory idle and the one the starvation test reads.

    ``fetched_s`` is ``fetch(S'[t_m], S[t_c]) / MemBW`` (0 when ``S'[t_m] >= S[t_c]``).

    Examples
    --------
    >>> memory_idle(PRINTED, -5.0, 2.0), memory_idle(NPUWEAVE, -5.0, 2.0)
    ((2.0, 2.0), (0.0, -3.0))
    """
    total = inh + fetched_s
    if r.memory_idle == "printed":
        charged = fetched_s
    else:
        charged = (total if total > 0.0 else 0.0) - (inh if inh > 0.0 else 0.0)
    return charged, (charged if r.starvation == "caused" else total)


def tie_key(r: Reading, best: float, eps: float, inherent: bool, distance: float
            ) -> tuple[bool, float]:
    """Sort key among candidates tied at the least total idle ``best`` (smaller wins).

    Examples
    --------
    >>> tie_key(PRINTED, 1.0, 1e-12, True, 3.0), tie_key(NPUWEAVE, 1.0, 1e-12, True, 3.0)
    ((False, -3.0), (True, -3.0))
    """
    uses_inherent = r.tie_scope == "all" or best <= eps
    return (inherent and uses_inherent, -distance)
