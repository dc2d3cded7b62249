"""The fuzz's (good, near) strategies for the structured-profile ops' arguments (``tests/fuzz.py``
adds them to ``ARGS``): schemas that parse, and ones with one bad part."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.fuzz_values import BAD_TEXT, NEAR_TEXT

_PROPERTY = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["string", "number", "integer", "boolean"]),
        "from": st.sampled_from(
            [{"keys": ["k1"]}, {"keys": ["city", "home-*"]}, {"memory_types": ["general"]}, {"keys": ["k?"]}]
        ),
    },
    optional={"description": st.sampled_from(["", "where the user lives", "Ünïcode"])},
)
_ARRAY = st.fixed_dictionaries(
    {"type": st.just("array"), "from": st.just({"memory_types": ["preference", "general"]})},
    optional={"max_items": st.integers(1, 50)},
)
SCHEMA_GOOD = st.dictionaries(
    st.sampled_from(["home_city", "k1", "likes", "age", "city"]), st.one_of(_PROPERTY, _ARRAY), min_size=1, max_size=3
)
SCHEMA_NEAR = st.one_of(
    st.just({}),
    st.just(["home_city"]),
    st.just({"Home City": {"type": "string", "from": {"keys": ["city"]}}}),
    st.just({"x": {"type": "date", "from": {"keys": ["x"]}}}),
    st.just({"x": {"type": "string"}}),
    st.just({"x": {"type": "string", "from": {"keys": [5]}}}),
    st.just({"x": {"type": "string", "from": {"memory_types": ["profile"]}}}),
    st.just({"x": {"type": "array", "from": {"keys": ["x"]}, "max_items": 51}}),
    st.builds(lambda bad: {"x": {"type": "string", "from": {"keys": [bad]}}}, st.one_of(BAD_TEXT, NEAR_TEXT)),
    st.dictionaries(st.text(max_size=3), st.just({"type": "string", "from": {"keys": ["x"]}}), min_size=65),
)

PROFILE_ARGS = {"properties": (SCHEMA_GOOD, SCHEMA_NEAR)}
