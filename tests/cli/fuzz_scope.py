"""The values the CLI fuzz gives the scope-wide verbs (clear-undo, promote --to-scope): a change
id no clear answered (a command line cannot know a real one before the fuzzed home is made), the
scopes a fact may be promoted into, and near misses."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.fuzz_values import BAD_TEXT, NEAR_TEXT

NEAR = st.one_of(NEAR_TEXT, BAD_TEXT, st.sampled_from(["-x", "--", "", "x" * 201]))

SCOPE_VALUES = {
    "change_id": (st.sampled_from(["0" * 32, "no-such-change"]), NEAR),
    "to_scope": (st.sampled_from(["tenant", "agent", "user"]), st.one_of(st.sampled_from(["global", "auto"]), NEAR)),
}
