"""Figures that show themselves in Jupyter without ``%matplotlib inline``.

npuweave draws on ``matplotlib.figure.Figure`` directly (no pyplot: no backend is chosen and
nothing is left open). A bare ``Figure`` has no rich display of its own, so a notebook printed
``<Figure size 1000x270 with 2 Axes>`` unless pyplot's inline backend had registered itself.
``new_figure`` returns a ``Figure`` subclass that renders its own PNG (``_repr_png_``), which
IPython shows inline whatever the backend.
"""

from __future__ import annotations

import functools
import io
from typing import Any


@functools.cache
def _figure_class() -> type:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    class NpuFigure(Figure):
        """A ``matplotlib.figure.Figure`` that Jupyter displays inline as a PNG."""

        def _repr_png_(self) -> bytes:
            buf = io.BytesIO()
            FigureCanvasAgg(self).print_png(buf, metadata={"Software": None})
            return buf.getvalue()

    NpuFigure.__module__ = __name__
    return NpuFigure


def new_figure(**kwargs: Any) -> Any:
    """A new ``Figure`` (``figsize=...`` and the rest as for ``Figure``) that shows inline.

    Examples
    --------
    >>> fig = new_figure(figsize=(2, 1))
    >>> fig._repr_png_()[:4]
    b'\\x89PNG'
    """
    return _figure_class()(**kwargs)
