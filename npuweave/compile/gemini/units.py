"""Quantities the Gemini IR commands take (``--dram-bw 16GB/s``, ``--clock 800MHz``): the
package's one bandwidth and frequency parsers (``npuweave.fileio.values``), named for the IR.
"""

from __future__ import annotations

from npuweave.fileio import values


def parse_bandwidth(text: str, what: str = "bandwidth") -> float:
    """Bytes per second from ``"16GB/s"`` (decimal prefixes), ``"16GiB/s"``, ``"128Gb/s"``.

    Examples
    --------
    >>> parse_bandwidth("16GB/s"), parse_bandwidth("1 KiB/s")
    (16000000000.0, 1024.0)
    """
    return values.parse_bandwidth(text, what)


def parse_frequency(text: str, what: str = "frequency") -> float:
    """Hertz from ``"1GHz"``, ``"800 MHz"``.

    Examples
    --------
    >>> parse_frequency("1GHz"), parse_frequency("800MHz")
    (1000000000.0, 800000000.0)
    """
    return values.parse_frequency(text, what)
