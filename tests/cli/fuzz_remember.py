"""The CLI fuzz's part for remember's verbs (lenses, frames, captures, decisions, render, context,
feedback, events, receipt): plausible and garbage values of their arguments. The fuzz home has a
lens ``dev`` worn by ``agent:helper``; ``FRAME`` and ``DECISION`` name a frame and a decision of
helper's that the fuzz made (``Cli`` writes them first)."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.cli.fuzz_service import NEAR

FRAME, DECISION = "f" * 32, "d" * 32  # replaced by the ids the fuzz home holds (tests/cli/test_cli_fuzz.py)
INSTANT = st.sampled_from(["2999-01-01T00:00:00Z", "2024-01-01T00:00:00Z"])
INSTANT_NEAR = st.sampled_from(["2024-01-01T00:00:00", "soon", "9999-12-31T23:59:59-05:00"])
LIST = st.lists(st.sampled_from(["lesson", "metric", "*"]), min_size=1, max_size=2)
NEAR_LIST = st.lists(NEAR, min_size=1, max_size=2)

REMEMBER_VALUES: dict[str, tuple[st.SearchStrategy, st.SearchStrategy]] = {
    "lens_id": (st.sampled_from(["dev", "dev", "other"]), st.one_of(st.just("bad id!"), NEAR)),
    "lenses": (st.just(["dev"]), NEAR_LIST),
    "entity_types": (LIST, NEAR_LIST),
    "relationships": (st.just(["owns"]), NEAR_LIST),
    "watches": (st.just(["fact.*"]), NEAR_LIST),
    "capabilities": (st.just(["read", "capture"]), st.lists(st.sampled_from(["fly", ""]), min_size=1, max_size=1)),
    "groups": (st.just(["contributors"]), NEAR_LIST),
    "read_scopes": (st.just(["user", "tenant"]), st.lists(st.sampled_from(["galaxy", ""]), min_size=1, max_size=1)),
    "scopes": (st.just(["user"]), st.lists(st.sampled_from(["galaxy", ""]), min_size=1, max_size=1)),
    "cross_lens": (st.just(["dev"]), NEAR_LIST),
    "expires_at": (INSTANT, INSTANT_NEAR),
    "at": (INSTANT, INSTANT_NEAR),
    "timestamp": (INSTANT, INSTANT_NEAR),
    "preferences": (st.just('{"priorities": {"lesson": 2}}'), st.sampled_from(["{", '{"weights": 1}', "[1]"])),
    "consumer": (st.sampled_from(["agent:helper", "user:ana"]), st.one_of(st.just("helper"), NEAR)),
    "group": (st.just("contributors"), st.one_of(st.just("a b"), NEAR)),
    "permissions": (st.just(["read", "decide"]), st.lists(st.sampled_from(["fly", "x"]), min_size=1, max_size=2)),
    "intent": (st.sampled_from(["fix", "plan"]), st.one_of(st.just("daydream"), NEAR)),
    "goal": (st.just("checkout timeouts"), NEAR),
    "tags": (st.just(["checkout"]), NEAR_LIST),
    "frame_id": (st.just(FRAME), st.one_of(st.just("0" * 32), NEAR)),
    "suppress": (st.just(["fact:abc"]), st.lists(st.sampled_from(["nope", "fact:"]), min_size=1, max_size=1)),
    "unsuppress": (st.just(["fact:abc"]), NEAR_LIST),
    "summary": (st.just("done"), NEAR),
    "claim": (st.just("Checkout is owned by Atlas"), NEAR),
    "source": (st.just("incident-42"), NEAR),
    "author": (st.just("ops-bot"), NEAR),
    "actor_chain": (st.just(["subsystem:watchdog"]), NEAR_LIST),
    "capture_key": (st.just("oncall"), st.one_of(st.just(""), NEAR)),
    "entity_type": (st.just("lesson"), NEAR),
    "decision": (st.sampled_from(["act", "no_op"]), st.one_of(st.just("maybe"), NEAR)),
    "rationale": (st.just("benchmarks first"), NEAR),
    "inputs": (st.just(["fact:abc"]), st.lists(st.sampled_from(["nope", "fact:"]), min_size=1, max_size=1)),
    "outcome": (st.just("it worked"), NEAR),
    "decision_id": (st.just(DECISION), st.one_of(st.just("0" * 32), NEAR)),
    "passes": (st.sampled_from(["1", "3"]), st.sampled_from(["0", "6", "x"])),
    "query": (st.just("checkout"), NEAR),
    "interaction_id": (st.just("0" * 32), NEAR),
    "ref": (st.just("fact:abc"), st.one_of(st.just("nope"), NEAR)),
    "since": (st.sampled_from(["0", "3"]), st.sampled_from(["-1", "x", "1e3"])),
    "types": (st.just(["fact.*"]), NEAR_LIST),
    "public_key": (st.just("00" * 32), st.one_of(st.just("zz"), NEAR)),
    "keys": (st.just("/nonexistent/keys"), NEAR),
}
