"""The Number ADT of Table III.1: a value (or array) bound to a format by name.

A framework kernel declares its weights and inputs as ``Number`` and names them
(``set_name("fc1.weight")``); the name is looked up in a process-wide registry that
``parse_config`` fills (FLOAT(32) when the name is missing), and every assignment or
arithmetic result is rounded onto the object's format.

Mixed formats follow the thesis: both operands go to float32, the operation runs there, and
the result takes the format with the wider dynamic range, except that FLOAT is preferred to
EXP. A plain Python or NumPy operand counts as FLOAT(32).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from npuweave.numbers.format import FLOAT32, Family, NumberFormat
from npuweave.numbers.quantize import Rounding, quantize

_REGISTRY: dict[str, NumberFormat] = {}


def register_formats(formats: Mapping[str, NumberFormat], *, replace: bool = True) -> None:
    """Install ``name -> format`` pairs in the global registry (``replace`` clears it first)."""
    if replace:
        _REGISTRY.clear()
    _REGISTRY.update(formats)


def registered_format(name: str) -> NumberFormat:
    """The format registered for ``name``, or FLOAT(32) when there is none."""
    return _REGISTRY.get(name, FLOAT32)


def clear_registry() -> None:
    _REGISTRY.clear()


class Number:
    """A NumPy value or array whose contents always lie on ``fmt``'s grid.

    Examples
    --------
    >>> from npuweave.numbers import FIXED
    >>> w = Number([0.3, -0.7], FIXED(4, 1))
    >>> w.as_float().tolist()
    [0.25, -0.75]
    >>> (w * 2).fmt.describe()   # FIXED x float -> the wider range, FLOAT(32)
    'FLOAT<1,8,23,127>'
    """

    __slots__ = ("_value", "fmt", "name", "rounding")

    def __init__(
        self,
        value: Any = 0.0,
        fmt: NumberFormat | None = None,
        *,
        name: str | None = None,
        rounding: Rounding | str = Rounding.NEAREST_EVEN,
    ) -> None:
        self.name = name
        self.rounding = Rounding(rounding)
        if fmt is None:
            fmt = registered_format(name) if name else _format_of(value)
        self.fmt = fmt
        self._value = self._round(value)

    def _round(self, value: Any) -> np.ndarray:
        raw = value.as_float() if isinstance(value, Number) else value
        return quantize(np.asarray(raw, dtype=np.float32), self.fmt, self.rounding)

    # -- configuration --------------------------------------------------------------------
    def set_name(self, name: str) -> Number:
        """Name the object and bind it to the registered format (re-rounding the value)."""
        self.name = name
        self.fmt = registered_format(name)
        self._value = self._round(self._value)
        return self

    # -- assignment -------------------------------------------------------------------------
    def assign(self, other: Any) -> Number:
        """``self = other``: a Number copies value and format; a native value takes FLOAT(32)."""
        self.fmt = other.fmt if isinstance(other, Number) else FLOAT32
        self._value = self._round(other)
        return self

    # -- computation ------------------------------------------------------------------------
    def _binary(self, other: Any, op: Any) -> Number:
        ofmt = other.fmt if isinstance(other, Number) else FLOAT32
        ovalue = other.as_float() if isinstance(other, Number) else other
        if ofmt == self.fmt:
            exact = op(self._value.astype(np.float64), np.asarray(ovalue, np.float64))
            return Number(exact, self.fmt, rounding=self.rounding)
        result = op(self._value, np.asarray(ovalue, np.float32)).astype(np.float32)
        return Number(result, result_format(self.fmt, ofmt), rounding=self.rounding)

    def __add__(self, other: Any) -> Number:
        return self._binary(other, np.add)

    def __mul__(self, other: Any) -> Number:
        return self._binary(other, np.multiply)

    __radd__ = __add__
    __rmul__ = __mul__

    def __iadd__(self, other: Any) -> Number:
        return self.assign(self + other)

    def __imul__(self, other: Any) -> Number:
        return self.assign(self * other)

    # -- conversion -------------------------------------------------------------------------
    def as_float(self) -> np.ndarray:
        """The value as float32 (a 0-d array for a scalar Number)."""
        return self._value.copy()

    def as_int(self) -> np.ndarray:
        """The value converted to int64 like C's ``(int)``: truncated toward zero."""
        return np.trunc(self._value).astype(np.int64)

    def __float__(self) -> float:
        return float(self._value)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._value.astype(dtype) if dtype is not None else self._value.copy()

    def __len__(self) -> int:
        return len(self._value)

    def __getitem__(self, index: Any) -> Number:
        return Number(self._value[index], self.fmt, name=self.name, rounding=self.rounding)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"Number{label}({self._value!r}, {self.fmt.describe()})"


def result_format(a: NumberFormat, b: NumberFormat) -> NumberFormat:
    """Format of a mixed-format result: FLOAT over EXP, else the wider dynamic range (a on ties)."""
    families = {a.family, b.family}
    if families == {Family.FLOAT, Family.EXP}:
        return a if a.family is Family.FLOAT else b
    return b if b.dynamic_range > a.dynamic_range else a


def set_name(obj: Number | Iterable[Number], name: str) -> None:
    """``setName`` / ``setArrayName``: bind one Number or every Number of an iterable to ``name``."""
    if isinstance(obj, Number):
        obj.set_name(name)
        return
    for item in obj:
        item.set_name(name)


def _format_of(value: Any) -> NumberFormat:
    return value.fmt if isinstance(value, Number) else FLOAT32
