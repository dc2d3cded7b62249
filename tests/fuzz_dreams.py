"""The fuzz's (good, near) strategies for the Dreams ops' arguments (``tests/fuzz.py`` adds them
to ``ARGS``). A proposal id nobody was given is refused as not found."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.fuzz_values import NEAR_TEXT, TEXT

DREAMS_ARGS = {
    "proposal_id": (st.sampled_from(["dr-0123456789abcdef", "dr-missing"]), NEAR_TEXT),
    "window_days": (st.integers(1, 365), st.sampled_from([0, -1, 366, 1.5, "7", True])),
    "stale_days": (st.integers(1, 400), st.sampled_from([0, -5, 36_501, 2.5, "90", None])),
    "note": (st.one_of(st.none(), TEXT), st.one_of(st.just("n" * 2001), st.just(5), NEAR_TEXT)),
    ("dream_proposals", "status"): (
        st.sampled_from(["pending", "applied", "rejected", "stale", "all"]),
        st.one_of(st.just("maybe"), NEAR_TEXT),
    ),
}
