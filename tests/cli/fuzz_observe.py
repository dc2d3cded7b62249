"""The values the CLI fuzz gives the observation-capture verbs (observe-record, -crystallize,
-status, -extract): a session id, or one the verbs refuse (a ':' in it, blank, too long)."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.fuzz_values import BAD_TEXT, NEAR_TEXT

OBSERVE_VALUES = {
    "session_id": (
        st.sampled_from(["s-1", "s-2", "no-such-session"]),
        st.one_of(NEAR_TEXT, BAD_TEXT, st.sampled_from(["a:b", "", "-x", "x" * 201])),
    ),
}
