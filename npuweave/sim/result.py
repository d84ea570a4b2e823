"""``SimResult``: everything one simulation run leaves behind, frozen.

The engine (``npuweave.sim.engine``) fills it; ``npuweave.metrics`` and ``npuweave.report``
read it. Times are seconds from the start of the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from npuweave.errors import ConfigError, optional_module
from npuweave.sim.records import Interval, RequestRecord


@dataclass(frozen=True, slots=True)
class SimResult:
    """One run of a scenario on the NPU engine.

    Attributes
    ----------
    intervals : busy intervals, one per unit on ``"PE"`` (zero-length ones included, so every
        scheduled unit appears exactly once) and one per transferred part on ``"DRAM"``; a
        tuple, or for closed-loop runs an ``IntervalColumns`` (the same records, stored as
        arrays and built on first use).
    requests : one record per finished request, ordered by tenant, then request index.
    makespan_s : time the last unit finished (0 when nothing ran).
    pe_busy_s, dram_busy_s : total busy time of the PE array and of the DRAM interface.
    notes : remarks a reader must see (e.g. the Layerweaver failsafe applied).
    scheduler : the registered name of the policy that produced the order.
    tenants : tenant labels in input order (a model given twice gets ``"name#2"``).
    path : which simulation path produced the result and why (``"engine: ..."`` or
        ``"closed-loop fast path: ..."``); not part of equality, since every path must give
        the same result.
    """

    intervals: Sequence[Interval]
    requests: tuple[RequestRecord, ...]
    makespan_s: float
    pe_busy_s: float
    dram_busy_s: float
    notes: tuple[str, ...] = ()
    scheduler: str = ""
    tenants: tuple[str, ...] = ()
    path: str = field(default="", compare=False)

    @property
    def pe_utilization(self) -> float:
        """PE busy time over the makespan (0 for an empty run)."""
        return self.pe_busy_s / self.makespan_s if self.makespan_s > 0 else 0.0

    @property
    def dram_utilization(self) -> float:
        """DRAM busy time over the makespan (0 for an empty run)."""
        return self.dram_busy_s / self.makespan_s if self.makespan_s > 0 else 0.0

    def to_dataframe(self, what: str = "requests") -> Any:
        """``"requests"`` (one row per request, with its latency) or ``"intervals"`` (one row
        per busy interval, with its duration) as a ``pandas.DataFrame`` (``pandas`` extra).

        Examples
        --------
        >>> result.to_dataframe("intervals").groupby("resource").duration_s.sum()  # doctest: +SKIP
        """
        pd = optional_module("pandas", "pandas")
        if what == "requests":
            rows = [{**asdict(r), "latency_s": r.latency_s} for r in self.requests]
            cols = [*RequestRecord.__dataclass_fields__, "latency_s"]
        elif what == "intervals":
            rows = [{**asdict(iv), "duration_s": iv.duration_s} for iv in self.intervals]
            cols = [*Interval.__dataclass_fields__, "duration_s"]
        else:
            raise ConfigError(f'to_dataframe: what must be "requests" or "intervals", got {what!r}')
        return _floats_with_nan(pd.DataFrame(rows, columns=cols))


def _floats_with_nan(frame: Any) -> Any:
    """Columns of numbers with gaps (``deadline_s`` is None without a deadline) as float64
    with NaN, not pandas' ``object`` dtype, so ``.mean()``, comparisons and Parquet work."""
    for col in frame.columns[frame.dtypes == "object"]:
        values = frame[col].dropna()
        if len(values) < len(frame) and all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            frame[col] = frame[col].astype("float64")
    return frame
