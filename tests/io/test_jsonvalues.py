"""Which JSON values can be stored and read back: no lone surrogates, no NaN or Infinity."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from neardup.io.jsonvalues import json_problem, may_hold_problem


def test_problems_are_named_where_they_are():
    assert json_problem({"id": "\ud800"}) == (
        "field 'id' has an unpaired surrogate at character 0 (invalid UTF-8)"
    )
    assert "field 'm'[1] is nan" in json_problem({"m": [1, float("nan")]})
    assert "inf" in json_problem({"a": {"b": float("inf")}})
    assert "a key" in json_problem({"\udc00": 1})
    assert json_problem({"a": [1, 2.5, "ok", None, {"b": True}]}) is None


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(VALUES)
def test_a_value_without_problems_round_trips_as_strict_json(value):
    if json_problem(value) is None:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        assert json.loads(text.encode("utf-8")) == value
    else:  # the cheap prefilter of the readers never misses one
        assert may_hold_problem(json.dumps(value).encode())
