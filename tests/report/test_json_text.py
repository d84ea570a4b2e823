"""``fileio.json_text`` writes indented JSON through the C encoder (one call per table of plain
rows); its text must be exactly what Python's own ``json.dumps(..., indent=...)`` writes of
``json_safe(obj)``, the reference here."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.fileio.formats import json_safe, json_text

_plain = (st.none() | st.booleans() | st.integers(-10**20, 10**20)
          | st.floats(allow_nan=True, allow_infinity=True)
          | st.text(alphabet=st.sampled_from('ab},\n{" é\\'), max_size=8))
_doc = st.recursive(_plain, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=4), inner, max_size=4), max_leaves=30)
_table = st.lists(st.dictionaries(st.text(max_size=4), _plain, max_size=4), max_size=5)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_doc, _table, st.dictionaries(st.text(max_size=3), _table, max_size=3)),
       st.sampled_from([0, 1, 2, 4]), st.booleans())
def test_json_text_is_pythons_indented_json(doc, indent, sort_keys):
    want = json.dumps(json_safe(doc), indent=indent, allow_nan=False, sort_keys=sort_keys)
    assert json_text(doc, indent=indent, sort_keys=sort_keys) == want + "\n"
