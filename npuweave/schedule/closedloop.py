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
"""

from __future__ import annotations

from dataclasses import dataclass


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
