"""The values the CLI fuzz gives the learnings verbs (learnings, learning-decide): a learning id no
candidate holds (refused as missing, or as needing an admin), or a near miss."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.fuzz_values import BAD_TEXT, NEAR_TEXT

LEARNING_VALUES = {
    "learning_id": (
        st.sampled_from(["lrn-0000000000000000", "no-such-learning"]),
        st.one_of(NEAR_TEXT, BAD_TEXT, st.sampled_from(["", "-x", "x" * 201])),
    ),
}
