"""The fuzz's (good, near) strategies for the seed-surface ops' arguments (``tests/fuzz.py`` adds
them to ``ARGS``): by-id ops, scope-wide ops, categories and links, observation capture, lineage
and summaries, learnings. Keyed by name, or ``(op, name)`` where an op means something else."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from memory_core.consolidation import RuleMerger
from memory_core.extraction.summaries import RuleSummarizer
from tests.fuzz_values import KEY_GOOD, KEY_NEAR, NEAR_TEXT, FromStore

SURFACE_ARGS: dict[Any, tuple[st.SearchStrategy, st.SearchStrategy]] = {
    # by-id ops: a real id of the store, one no row holds, or a near miss
    "id": (st.one_of(st.just(FromStore("version_id")), st.sampled_from(["no-such-id", "x" * 32])), NEAR_TEXT),
    ("verify", "key"): (st.one_of(st.none(), KEY_GOOD), KEY_NEAR),
    # learnings: a status of the queue; a learning id no candidate holds (refused as missing)
    ("learnings", "status"): (
        st.sampled_from(["pending", "accepted", "rejected", "all"]),
        st.one_of(st.sampled_from(["maybe", "PENDING", "decided"]), NEAR_TEXT),
    ),
    "learning_id": (st.sampled_from(["lrn-0000000000000000", "no-such-learning"]), NEAR_TEXT),
    "accept": (st.booleans(), st.sampled_from(["yes", "no", "", 1, 0, None, "false"])),
    # categories and links: a defined category or one no scope defines (refused as missing), a
    # name of the wrong shape; keys of the seeded home; flags
    "category": (
        st.sampled_from(["work", "family", "no-such-category"]),
        st.one_of(st.sampled_from(["Work", "a b", "-x", "x" * 65]), NEAR_TEXT),
    ),
    ("category_define", "name"): (
        st.sampled_from(["work", "family"]),
        st.one_of(st.sampled_from(["Work", "a b", "-x", "x" * 65]), NEAR_TEXT),
    ),
    "description": (st.one_of(st.none(), st.sampled_from(["work things", "relatives"])), NEAR_TEXT),
    "other_key": (KEY_GOOD, KEY_NEAR),
    ("categories", "key"): (st.one_of(st.none(), KEY_GOOD), KEY_NEAR),
    ("link", "relation"): (
        st.sampled_from(["related", "depends_on"]),
        st.one_of(st.sampled_from(["Related", "a b", ""]), NEAR_TEXT),
    ),
    "rescind": (st.booleans(), st.sampled_from(["yes", 1, None])),
    "unlink": (st.booleans(), st.sampled_from(["yes", 1, None])),
    # observation capture: a session id (a ':' or a blank is refused), tool calls and messages
    "session_id": (
        st.sampled_from(["s-1", "s-2", "no-such-session"]),
        st.one_of(st.sampled_from(["a:b", "", " ", "x" * 201]), NEAR_TEXT),
    ),
    "observations": (
        st.lists(
            st.one_of(
                st.fixed_dictionaries(
                    {"tool": st.sampled_from(["search", "weather"])},
                    optional={"input": st.sampled_from(["flights", {"city": "Oslo"}]), "output": st.integers(0, 9)},
                ),
                st.fixed_dictionaries(
                    {"role": st.just("user"), "content": st.sampled_from(["I live in Oslo.", "hello"])}
                ),
            ),
            min_size=1,
            max_size=3,
        ),
        st.one_of(
            st.sampled_from([[], "trace", {"tool": "x"}, [{"tool": ""}], [{"role": "system", "content": "x"}]]),
            st.just([{"tool": "x", "output": 1, "result": 2}]),
            st.just([{"tool": "x", "at": "yesterday"}]),
        ),
    ),
    # scope-wide ops: a change id no clear answered (refused as missing), the scope to promote into
    "change_id": (
        st.sampled_from(["0" * 32, "no-such-change"]),
        st.one_of(st.sampled_from(["", " ", "x" * 201]), NEAR_TEXT),
    ),
    "to_scope": (
        st.sampled_from(["tenant", "agent", "user"]),
        st.one_of(st.sampled_from(["global", "auto", "team"]), NEAR_TEXT),
    ),
    # lineage and summaries: Memory.summarize_sessions' summarizer (rules) or model (none: offline)
    "summarizer": (st.one_of(st.none(), st.just(RuleSummarizer())), st.sampled_from(["rules", 5, RuleMerger()])),
    "llm": (st.none(), st.sampled_from(["gpt", 5, RuleSummarizer()])),
}
