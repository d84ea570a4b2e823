"""One parser per kind of value a user types: time, size, bandwidth, frequency, rate, count,
priority, seed, share, ratio.

Every CLI flag, YAML field, trace cell and sweep setting of that kind goes through the same
function here, so the accepted forms, the bounds and the one-line error are the same wherever
the value is typed. Each parser takes the raw value (text, or a number from YAML/JSON) and
``what``, the name the error gives (``--deadline``, ``field 'weight_buffer'``, ``row 3:
field 'time'``), and raises ``ConfigError`` naming it, the bad value and the accepted forms.

Units are never guessed: a bare number for a time, a size or a bandwidth is an error that shows
the accepted forms, except where the name already says the unit (``time_s``, ``clock_hz``,
``l2_bytes``: the caller passes ``bare=`` the unit the name states).  Number texts are ASCII
digits only (``²`` or ``١`` are not numbers) and at most ``MAX_NUMBER_CHARS`` long.
"""

from __future__ import annotations

import math
import re
from typing import Any

from npuweave.errors import ConfigError

#: Longest number text read (a 5000-digit number is a typo or an attack, not a setting).
MAX_NUMBER_CHARS = 40
#: Largest integer a count, priority or batch size may take.
MAX_PRIORITY = 2**31 - 1
#: Seeds are whole numbers in [0, 2**64).
SEED_LIMIT = 2**64
#: Largest batch any batcher or cost table is built for.
MAX_BATCH = 1024
#: Latest time (s) an arrival or a duration may take: float64 keeps nanoseconds up to ~9e6 s,
#: and past it ``t + service`` rounds to ``t`` (arrivals at 1e300 s gave ANTT 0.5, exit 0).
MAX_TIME_S = 1e6

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_QTY = re.compile(rf"^\s*({_NUM}|[-+]?inf)\s*([A-Za-z/%µ]*(?:/s)?)\s*$", re.ASCII)
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
TIME_FORMS = "a time with a unit ns, us, ms or s, e.g. 15ms, 2s"
_DEC = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_BIN = {"": 1, "k": 1024, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_SIZE = re.compile(r"^([kKMGT]?i?)([Bb])$")
_BW = re.compile(r"^([kKMGT]?i?)([Bb])(?:/s|ps)$")
_HZ = re.compile(r"^([kKmMgGtT]?)(?:hz|Hz|HZ|hZ)$")  # 1ghz: a frequency has no milli
SIZE_FORMS = "a size with a unit, e.g. '48 MiB', '2.3 MB', '4096 B'"
BW_FORMS = "a bandwidth with a unit, e.g. '225 GB/s', '16GiB/s', '800 Gb/s'"
HZ_FORMS = "a frequency with a unit, e.g. '700 MHz', '1 GHz'"


def _text(value: Any, what: str, forms: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ConfigError(f"{what}: {value!r} is not a value; give {forms}")
    text = str(value)
    if len(text.strip()) > MAX_NUMBER_CHARS + 8:
        raise ConfigError(f"{what}: a {len(text)}-character value; give {forms}")
    return text


def _split(value: Any, what: str, forms: str, noun: str = "a number") -> tuple[float, str]:
    """``(number, unit text)`` of ``value``; a number given as a YAML/JSON number has unit ''."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, int) and abs(value) > 10**300:
            raise ConfigError(f"{what}: a {len(str(abs(value)))}-digit number; give {forms}")
        number = float(value)
        if math.isnan(number):
            raise ConfigError(f"{what}: nan is not a number; give {forms}")
        return number, ""
    text = _text(value, what, forms)
    m = _QTY.match(text)
    if not m or len(m.group(1)) > MAX_NUMBER_CHARS:
        raise ConfigError(f"{what}: {text[:40]!r} is not {noun}; give {forms}")
    return float(m.group(1)), m.group(2)


def _bounded(number: float, value: Any, what: str, forms: str, *, low: float, high: float,
             low_open: bool) -> float:
    if math.isnan(number) or number > high or number < low or (low_open and number == low):
        rel = ">" if low_open else ">="
        top = "" if math.isinf(high) else f" and <= {high:g}"
        shown = repr(value) if len(str(value)) <= 40 else f"a {len(str(value))}-character value"
        raise ConfigError(f"{what}: {shown} is out of range; give {forms} ({rel} {low:g}{top})")
    return number


def parse_time(value: Any, what: str, *, bare: str | None = None, low: float = 0.0,
               low_open: bool = True, high: float = math.inf) -> float:
    """Seconds from ``15ms``, ``250us``, ``2s``; ``bare`` is the unit a bare number is read in
    (only where the name says it, e.g. a ``time_s`` column); otherwise a bare number is an error.

    ``inf`` is accepted only when ``high`` is infinite. The default range is ``(0, inf]``.

    Examples
    --------
    >>> parse_time("15ms", "--deadline"), parse_time("0.5", "time_s", bare="s")
    (0.015, 0.5)
    >>> parse_time("15", "--deadline")
    Traceback (most recent call last):
    ...
    npuweave.errors.ConfigError: --deadline: '15' has no unit; write 15ms, 15s or 15us (units: ns, us, ms, s)
    """
    number, unit = _split(value, what, TIME_FORMS, "a time")
    if unit == "" and number == 0:
        unit = "s"  # zero is zero in any unit
    if unit == "":
        if bare is None:
            raise ConfigError(f"{what}: {value!r} has no unit; write {value}ms, {value}s or "
                              f"{value}us (units: ns, us, ms, s)")
        unit = bare
    scale = _TIME_UNITS.get(unit if unit == "µs" else unit.lower())
    if scale is None:
        raise ConfigError(f"{what}: unknown time unit {unit!r} in {value!r}; give {TIME_FORMS}")
    return _bounded(number * scale, value, what, TIME_FORMS, low=low, high=high,
                    low_open=low_open)


def _scaled(value: Any, what: str, forms: str, pattern: re.Pattern[str], *, binary: bool,
            bare: str | None) -> float:
    number, unit = _split(value, what, forms, "a quantity")
    if unit == "":
        if bare is None and number != 0:
            raise ConfigError(f"{what}: {value!r} has no unit; give {forms}")
        return number
    m = pattern.match(unit)
    if not m:
        raise ConfigError(f"{what}: unit {unit!r} of {value!r} is not of this kind; give {forms}")
    prefix = m.group(1)
    if pattern is _HZ and prefix not in ("k", ""):
        prefix = prefix.upper()
    scale: float
    if prefix.endswith("i"):
        scale = _BIN[prefix[:-1]]
    else:
        scale = (_BIN if binary else _DEC)[prefix]
    bits = len(m.groups()) > 1 and m.group(2) == "b"
    return number * scale / (8 if bits else 1)


def parse_size(value: Any, what: str, *, bare: str | None = None, low: int = 0,
               high: float = 2.0**60) -> int:
    """Bytes from ``'48 MiB'``, ``'2.3 MB'`` (a plain MB/KB/GB is 1024-based, as datasheets
    mean buffers), ``'4096 B'``; ``bare='B'`` where the name says bytes (``l2_bytes``).

    Examples
    --------
    >>> parse_size("48 MB", "weight_buffer") == 48 * 2**20
    True
    >>> parse_size(4096, "l2_bytes", bare="B")
    4096
    """
    v = _scaled(value, what, SIZE_FORMS, _SIZE, binary=True, bare=bare)
    return int(round(_bounded(v, value, what, SIZE_FORMS, low=low, high=high, low_open=False)))


def parse_bandwidth(value: Any, what: str, *, bare: str | None = None,
                    allow_zero: bool = False) -> float:
    """Bytes per second from ``'225 GB/s'`` (decimal), ``'16GiB/s'``, ``'800 Gb/s'`` (bits).

    Examples
    --------
    >>> parse_bandwidth("16GB/s", "--dram-bw"), parse_bandwidth("800 Gb/s", "dram_bw")
    (16000000000.0, 100000000000.0)
    """
    v = _scaled(value, what, BW_FORMS, _BW, binary=False, bare=bare)
    return _bounded(v, value, what, BW_FORMS, low=0.0, high=1e18, low_open=not allow_zero)


def parse_frequency(value: Any, what: str, *, bare: str | None = None) -> float:
    """Hertz from ``'700 MHz'``, ``'1GHz'``; ``bare='Hz'`` where the name says hertz.

    Examples
    --------
    >>> parse_frequency("700 MHz", "clock_hz")
    700000000.0
    """
    v = _scaled(value, what, HZ_FORMS, _HZ, binary=False, bare=bare)
    return _bounded(v, value, what, HZ_FORMS, low=0.0, high=1e15, low_open=True)


def parse_rate(value: Any, what: str, *, high: float = 1e9) -> float:
    """Requests per second, finite and > 0: ``300``, ``300/s`` (a flag named ``--qps`` says
    the unit, so a bare number is read per second).

    Examples
    --------
    >>> parse_rate("300", "--qps"), parse_rate("2.5/s", "--qps")
    (300.0, 2.5)
    """
    forms = "requests per second, e.g. 300"
    number, unit = _split(value, what, forms, "a rate")
    if unit not in ("", "/s"):
        raise ConfigError(f"{what}: {value!r} is not a rate; give {forms}")
    return _bounded(number, value, what, forms, low=0.0, high=high, low_open=True)


def parse_int(value: Any, what: str, *, low: int, high: int, forms: str = "") -> int:
    """A whole number in ``[low, high]`` from text or an int (no ``1.5``, no ``1e3``, no ``²``).

    Examples
    --------
    >>> parse_int("+12", "--priority", low=1, high=99)
    12
    """
    hint = forms or f"a whole number from {low} to {high}"
    if isinstance(value, bool):
        raise ConfigError(f"{what}: {value!r} is not a whole number; give {hint}")
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)
    if isinstance(value, int):
        n = value
    else:
        text = _text(value, what, hint).strip()
        if not re.fullmatch(r"[-+]?\d{1,40}", text, re.ASCII):
            raise ConfigError(f"{what}: {str(value)[:40]!r} is not a whole number; give {hint}")
        n = int(text)
    if not low <= n <= high:
        shown = str(n) if len(str(n)) <= 24 else f"a {len(str(abs(n)))}-digit number"
        raise ConfigError(f"{what}: {shown} is out of range; give {hint}")
    return n


def parse_priority(value: Any, what: str) -> int:
    """An integer priority in ``[1, 2**31 - 1]`` (larger is more important, as in PREMA)."""
    return parse_int(value, what, low=1, high=MAX_PRIORITY,
                     forms=f"a whole number from 1 to {MAX_PRIORITY}")


def parse_seed(value: Any, what: str = "--seed") -> int:
    """A random seed in ``[0, 2**64)``."""
    return parse_int(value, what, low=0, high=SEED_LIMIT - 1,
                     forms="a whole number in [0, 2**64)")


def parse_share(value: Any, what: str) -> float:
    """A share in ``[0, 1]`` from ``0.01`` or ``1%``.

    Examples
    --------
    >>> parse_share("1%", "--violations"), parse_share("0.25", "--violations")
    (0.01, 0.25)
    """
    forms = "a share from 0 to 1, or a percentage (e.g. 0.01 or 1%)"
    number, unit = _split(value, what, forms)
    if unit not in ("", "%"):
        raise ConfigError(f"{what}: {value!r} is not a share; give {forms}")
    share = number / 100 if unit == "%" else number
    return _bounded(share, value, what, forms, low=0.0, high=1.0, low_open=False)


def parse_ratio(text: Any, what: str, parts: int | None = None) -> tuple[float, ...]:
    """Positive finite weights from ``4:1`` (``parts`` fixes how many).

    Examples
    --------
    >>> parse_ratio("4:1", "--ratio", 2)
    (4.0, 1.0)
    """
    forms = "positive numbers joined by ':' (e.g. 4:1)"
    items = _text(text, what, forms).split(":")
    if parts is not None and len(items) != parts:
        raise ConfigError(f"{what}: {text!r} has {len(items)} parts; give {parts}, {forms}")
    out = []
    for item in items:
        number, unit = _split(item, what, forms)
        if unit:
            raise ConfigError(f"{what}: {text!r}; give {forms}")
        out.append(_bounded(number, text, what, forms, low=0.0, high=1e12, low_open=True))
    return tuple(out)


def per_model(text: Any, what: str, n_models: int) -> list[str]:
    """The items of a comma list with one entry per model (``--qps 300,80``)."""
    items = [s.strip() for s in _list_text(text, what).split(",")]
    if any(not s for s in items):
        raise ConfigError(f"{what}: empty entry in {text!r}; give comma-separated values")
    if len(items) != n_models:
        raise ConfigError(f"{what}: {len(items)} values ({str(text)[:60]!r}) for {n_models} "
                          "models; give one value per model, in --models order")
    return items


def _list_text(text: Any, what: str) -> str:
    s = str(text)
    if len(s) > 10_000:
        raise ConfigError(f"{what}: a {len(s)}-character list; give one short value per model")
    return s
