"""Fuzzing: whatever JSON comes in, the reader fails only with the one-line IRError, and
whatever it accepts is validated, summarized and replayed without crashing."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from irdata import B1, DATA, raw

from npuweave.compile import gemini
from npuweave.errors import InfeasibleError, IRError

scalars = st.none() | st.booleans() | st.integers(-5, 2**40) | st.floats(allow_nan=False) | st.text(
    max_size=6
)
json_values = st.recursive(
    scalars,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4),
    max_leaves=20,
)
TOP = {"-1": {"in": [], "out": []}, "0": [], "buffersize": 8, "top_batch_cut": 1, "xlen": 1,
       "ylen": 1}
# documents that look like an IR at the top, with arbitrary values under the known keys
ir_like = st.fixed_dictionaries({k: json_values | st.just(v) for k, v in TOP.items()})

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _load_or_irerror(text: str | bytes) -> None:
    try:
        ir = gemini.loads(text, source="fuzz.json")
    except IRError as err:
        assert "\n" not in str(err) and str(err).startswith("fuzz.json: ")
        return
    gemini.validate(ir)
    gemini.summarize(ir)
    try:
        gemini.simulate(ir)
    except InfeasibleError as err:  # an inconsistent IR may stall the replay, said in one line
        assert "\n" not in str(err)


@FUZZ
@given(json_values)
def test_arbitrary_json(value):
    _load_or_irerror(json.dumps(value))


@FUZZ
@given(ir_like)
def test_ir_shaped_json(value):
    _load_or_irerror(json.dumps(value))


@FUZZ
@given(st.binary(max_size=64))
def test_arbitrary_bytes(data):
    _load_or_irerror(data)


def _paths(node, prefix=()):
    """Every (container path, key) in a JSON tree."""
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for k, v in items:
        yield prefix, k
        if isinstance(v, dict | list):
            yield from _paths(v, prefix + (k,))


@pytest.fixture(scope="module")
def b1_slice():
    """The first six workloads of the batch-1 file (enough structure, fast to fuzz)."""
    if not DATA.is_dir():
        pytest.skip(f"{DATA} not found")
    doc = raw(B1)
    doc["0"] = doc["0"][:6]
    return doc


@settings(max_examples=int(os.environ.get("IR_FUZZ_EXAMPLES", 200)), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.data())
def test_mutated_real_file(b1_slice, data):
    """Replace, or delete, one value anywhere in a real file."""
    doc = json.loads(json.dumps(b1_slice))
    paths = list(_paths(doc))
    prefix, key = data.draw(st.sampled_from(paths))
    parent = doc
    for k in prefix:
        parent = parent[k]
    if isinstance(parent, dict) and data.draw(st.booleans()):
        del parent[key]
    else:
        parent[key] = data.draw(json_values)
    _load_or_irerror(json.dumps(doc))
