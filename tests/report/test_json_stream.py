"""Row sources (``row_chunks()``, rows kept as columns) are written a chunk at a time; the text
must be exactly Python's ``json.dumps(json_safe(doc), indent=...)`` of the same document with
the rows as a list, and the CSV exactly ``csv_text`` of the list."""

from __future__ import annotations

import gzip
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.fileio.formats import csv_text, json_safe, json_text, write_csv, write_json


class Source:
    """A row source over a list of dicts, ``size`` rows a chunk (some chunks empty)."""

    def __init__(self, rows, size, plain=False):
        self.list, self.size, self.plain = rows, size, plain

    def __len__(self):
        return len(self.list)

    def row_chunks(self):
        for lo in range(0, len(self.list), self.size):
            yield []
            yield self.list[lo:lo + self.size]

    def json_plain(self):
        return self.plain


_value = (st.none() | st.booleans() | st.integers(-10**6, 10**6)
          | st.floats(allow_nan=True, allow_infinity=True)
          | st.text(alphabet=st.sampled_from('ab},\n{" é\\'), max_size=6))
_finite = (st.none() | st.booleans() | st.integers(-10**6, 10**6)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=4))
_row = st.dictionaries(st.text(max_size=3), _value | st.lists(_value, max_size=2), max_size=4)
_plain_row = st.dictionaries(st.text(max_size=3), _finite, min_size=1, max_size=4)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(_row, max_size=9), size=st.integers(1, 4),
       indent=st.sampled_from([None, 0, 2, 4]), depth=st.integers(0, 2))
def test_streamed_rows_are_pythons_json(rows, size, indent, depth):
    def doc(value):
        for _ in range(depth):
            value = {"x": 1.5, "rows": value, "z": [float("inf")]}
        return value
    want = json.dumps(json_safe(doc(rows)), indent=indent, allow_nan=False) + "\n"
    assert json_text(doc(Source(rows, size)), indent=indent) == want


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(_plain_row, max_size=9), size=st.integers(1, 4))
def test_plain_rows_skip_the_safety_pass_with_the_same_text(rows, size):
    want = json.dumps({"a": rows, "b": []}, indent=2, allow_nan=False) + "\n"
    assert json_text({"a": Source(rows, size, plain=True), "b": Source([], 1)}) == want


def test_files_and_gzip_are_the_bytes_of_the_whole_text(tmp_path):
    rows = [{"id": i, "t": i / 7, "m": None if i % 3 else float("nan")} for i in range(3000)]
    whole = json_text({"rows": rows, "n": 3000})
    write_json(tmp_path / "a.json", {"rows": Source(rows, 7), "n": 3000})
    assert (tmp_path / "a.json").read_text(encoding="utf-8") == whole
    write_json(tmp_path / "a.json.gz", {"rows": Source(rows, 7), "n": 3000})
    assert (tmp_path / "a.json.gz").read_bytes() == gzip.compress(whole.encode("utf-8"), mtime=0)


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.fixed_dictionaries({"a": _finite, "b": _value}), min_size=1,
                     max_size=9), size=st.integers(1, 4))
def test_streamed_csv_is_csv_text(tmp_path_factory, rows, size):
    path = tmp_path_factory.mktemp("csv") / "r.csv"
    write_csv(path, Source(rows, size), ["a", "b"])
    # bytes: reading text back would turn a value's carriage return into a newline
    assert path.read_bytes() == csv_text(rows, ["a", "b"]).encode("utf-8")


class Columns(Source):
    """A plain row source that also gives its rows as columns (``column_chunks``)."""

    def __init__(self, rows, size, fields):
        super().__init__(rows, size, plain=True)
        self.fields = fields

    def column_chunks(self):
        for lo in range(0, len(self.list), self.size):
            chunk = self.list[lo:lo + self.size]
            yield {k: [r[k] for r in chunk] for k in self.fields}


_keys = st.lists(st.text(alphabet=st.sampled_from('a%"\\\né}{,'), max_size=3), min_size=1,
                 max_size=4, unique=True)
# one kind per column mostly (the fast passes), any plain kind mixed in sometimes
_kind = st.sampled_from([
    st.floats(allow_nan=False, allow_infinity=False) | st.none(),
    st.floats(allow_nan=False, allow_infinity=False), st.integers(-10**20, 10**20),
    st.booleans() | st.none(), st.none(), st.sampled_from(["resnet50", 'a"b', "é\n", "%s"]),
    _finite])


@settings(max_examples=300, deadline=None)
@given(data=st.data(), keys=_keys, n=st.integers(0, 9), size=st.integers(1, 4),
       sort_keys=st.booleans(), indent=st.sampled_from([0, 2, 3]))
def test_rows_from_columns_are_pythons_json(data, keys, n, size, sort_keys, indent):
    kinds = [data.draw(_kind) for _ in keys]
    rows = [{k: data.draw(kind) for k, kind in zip(keys, kinds, strict=True)} for _ in range(n)]
    want = json.dumps({"r": rows, "x": 1}, indent=indent, sort_keys=sort_keys) + "\n"
    got = json_text({"r": Columns(rows, size, keys), "x": 1}, indent=indent,
                    sort_keys=sort_keys)
    assert got == want


def test_a_non_finite_float_in_plain_columns_is_refused():
    import pytest

    for bad in (float("inf"), float("nan")):
        with pytest.raises(ValueError, match="JSON compliant"):
            json_text({"r": Columns([{"a": 1.0}, {"a": bad}, {"a": None}], 5, ["a"])})
