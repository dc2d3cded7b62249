"""The fuzz's (good, near) strategies for the consolidation ops' arguments (``tests/fuzz.py``
adds them to ``ARGS``)."""

from __future__ import annotations

from hypothesis import strategies as st

from memory_core.consolidation import RuleMerger
from memory_core.extraction.rules import RuleExtractor
from tests.fuzz_values import NEAR_TEXT

COMPOUNDING_ARGS = {
    "merger": (st.one_of(st.none(), st.just(RuleMerger())), st.sampled_from(["rules", RuleExtractor(), 5])),
    "min_cosine": (
        st.one_of(st.none(), st.floats(0.3, 1.0)),
        st.sampled_from([0.0, -0.5, 1.5, float("nan"), "0.8", True]),
    ),
    "max_cluster": (st.one_of(st.none(), st.integers(2, 12)), st.sampled_from([1, 0, -3, 2.5, "4", 10_001])),
    "run_id": (st.sampled_from(["cr-0123456789abcdef", "cr-missing"]), NEAR_TEXT),
}
