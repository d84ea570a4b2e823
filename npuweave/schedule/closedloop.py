"""The closed loop (thesis IV.5.B) as one arrival process: the only place its rule lives.

``k`` streams, one per tenant, each issue their first request at time 0 and request ``r + 1``
the moment request ``r`` finishes, for ``requests`` requests per stream, or, with ``window_s``,
while the previous request finished before the window ends (requests already issued finish,
so the makespan may pass the window).

Who knows the finish: ``plan`` and the serving simulator learn it when a request's last unit
is dispatched (the predicted finish, which the engine reproduces exactly), as the thesis's
scheduler appends queued requests just before the running ones complete; the next request's
units then join the candidate group at once. ``npuweave.schedule.kernel`` compiles the same
rule (``reissue``) from the two fields. It lives in ``schedule`` (not ``sim``) because
``plan`` and the kernel use it and ``schedule`` may not import ``sim``.

Examples
--------
>>> loop = ClosedLoop(requests=2)
>>> loop.reissue(0, 3.0), loop.reissue(1, 6.0)
(True, False)
>>> ClosedLoop(window_s=5.0).reissue(7, 4.9)
True

The loop also defines the window closed-loop metrics are measured over (``common_window``):
the metrics package may not import ``schedule``, so callers pass it (``experiments.compare``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ClosedLoop:
    """``requests`` per stream, or issue while the previous request finished before
    ``window_s`` (the window wins when both are given)."""

    requests: int | None = None
    window_s: float | None = None

    def first(self) -> bool:
        """Whether the streams issue their first request at time 0."""
        return self.window_s is None or self.window_s > 0.0

    def reissue(self, index: int, finish_s: float) -> bool:
        """Whether request ``index + 1`` is issued at ``finish_s``, when request ``index``
        of the same stream finishes."""
        if self.window_s is not None:
            return finish_s < self.window_s
        return self.requests is not None and index + 1 < self.requests

    @staticmethod
    def common_window(requests: Iterable[Any]) -> tuple[float, float]:
        """The measurement window of a closed-loop run, from its request records (anything
        with ``tenant`` and ``finish_s``): from 0, when every stream issues its first request,
        until the first stream stops issuing. A stream issues its next request the moment
        one finishes, so it stops at the finish of its last request; after that the other
        streams run alone, which would dilute a measurement of sharing. ``(0.0, 0.0)`` when
        nothing finished.

        Pass it (or its value) as the ``window`` of ``npuweave.metrics`` functions.

        Examples
        --------
        >>> from types import SimpleNamespace as R
        >>> ClosedLoop.common_window([R(tenant="a", finish_s=3.0), R(tenant="a", finish_s=6.0),
        ...                           R(tenant="b", finish_s=5.0)])
        (0.0, 5.0)
        """
        last: dict[Any, float] = {}
        for r in requests:
            f = r.finish_s
            if f > last.get(r.tenant, float("-inf")):
                last[r.tenant] = f
        return 0.0, min(last.values(), default=0.0)
