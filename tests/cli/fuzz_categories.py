"""The values the CLI fuzz gives the category and link verbs (category-define, categories,
assign-category, link, links)."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.fuzz_values import BAD_TEXT, NEAR_TEXT

NEAR = st.one_of(NEAR_TEXT, BAD_TEXT, st.sampled_from(["-x", "--", "", "Work", "a b", "x" * 65]))

CATEGORY_VALUES = {
    "category": (st.sampled_from(["work", "family", "no-such-category"]), NEAR),
    "description": (st.sampled_from(["work things", "relatives", "é中文"]), st.one_of(NEAR_TEXT, BAD_TEXT)),
    "other_key": (st.sampled_from(["k1", "k2", "city", "doc:readme"]), NEAR),
}
