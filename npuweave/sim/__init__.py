"""The event-driven NPU engine and serving simulator."""

from npuweave.sim.records import Interval, RequestRecord

__all__ = ["Interval", "RequestRecord"]
