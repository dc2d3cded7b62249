"""The values the CLI fuzz gives the by-id verbs (get-by-id, update-by-id, verify --id): ids no row
holds (a command line cannot know a real one before the fuzzed home is made), and near misses."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.fuzz_values import BAD_TEXT, NEAR_TEXT

NEAR = st.one_of(NEAR_TEXT, BAD_TEXT, st.sampled_from(["-x", "--", "", "x" * 201]))
IDS = st.sampled_from(["0" * 32, "no-such-id", "k1"])

BYID_VALUES = {
    "id": (IDS, NEAR),
    "row_id": (IDS, NEAR),
}
