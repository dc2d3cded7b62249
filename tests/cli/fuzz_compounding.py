"""The values the CLI fuzz gives the consolidation verbs (consolidate, consolidation-runs,
consolidation-undo, lineage)."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.fuzz_values import BAD_TEXT, NEAR_TEXT

NEAR = st.one_of(NEAR_TEXT, BAD_TEXT, st.sampled_from(["-x", "--", ""]))

COMPOUNDING_VALUES = {
    "min_cosine": (st.sampled_from(["0.4", "0.85", "1"]), st.sampled_from(["0", "1.5", "nan", "-1", "x"])),
    "max_cluster": (st.sampled_from(["2", "6"]), st.sampled_from(["1", "0", "x", "2.5", "100000"])),
    "run_id": (st.just("cr-0123456789abcdef"), NEAR),
}
