"""Reports of runs: rich tables, CSV/JSON files, timeline PNGs, Perfetto/Chrome traces.

Every file goes through ``npuweave.fileio`` so an interrupted run leaves no partial output.

Examples
--------
>>> from npuweave.report import plot_timeline, write_trace     # doctest: +SKIP
>>> plot_timeline({"layerweaver": result.intervals}, "lw.png")  # doctest: +SKIP
>>> write_trace("lw.json", {"layerweaver": result.intervals})   # doctest: +SKIP
"""

from npuweave.report.curves import curves_png
from npuweave.report.tables import (
    flatten,
    format_value,
    rich_table,
    to_csv,
    write_csv,
    write_rows_json,
)
from npuweave.report.timeline import plot_timeline
from npuweave.report.trace import chrome_trace, trace_events, write_trace

__all__ = [
    "chrome_trace", "curves_png", "flatten", "format_value", "plot_timeline", "rich_table", "to_csv",
    "trace_events", "write_csv", "write_rows_json", "write_trace",
]
