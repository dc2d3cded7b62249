"""The fuzz's (good, near) strategies for remember's arguments (``tests/fuzz.py`` adds them to
``ARGS``). The fuzz home has a lens ``dev`` (read, capture, decide) worn by ``agent:helper``;
frames, decisions, interactions and receipts are read from the store when a call is made."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.fuzz_values import GARBAGE, INSTANT_GOOD, INSTANT_NEAR, NEAR_TEXT, TEXT, FromStore

SCOPE_NAMES = st.lists(st.sampled_from(["agent", "user", "tenant"]), min_size=1, max_size=3, unique=True)
REFS = st.lists(st.sampled_from(["fact:abc", "decision:d1", "relation:t1", "note:n1"]), max_size=3)
REFS_NEAR = st.one_of(st.just(["nope"]), st.just("fact:abc"), st.just(["fact:"]), st.just([5]))
NAMES = st.lists(st.sampled_from(["lesson", "metric", "decision", "*"]), max_size=3)
NAMES_NEAR = st.one_of(st.just("lesson"), st.just([""]), st.just([5]), st.just(["\ud800"]))
CAPABILITIES = st.lists(st.sampled_from(["read", "capture", "decide", "approve"]), min_size=1, max_size=4)
CAPABILITIES_NEAR = st.one_of(st.just(["fly"]), st.just("read"), st.just([]), st.just([None]))


def _optional(good: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(st.none(), good)


def _stored(what: str, *tampers: object) -> tuple[st.SearchStrategy, st.SearchStrategy]:
    return st.just(FromStore(what)), st.one_of(st.builds(FromStore, st.just(what), st.sampled_from(tampers)), NEAR_TEXT)


ROSTER_GOOD = st.sampled_from(
    [
        {"groups": {"writers": {"permissions": ["read", "capture"]}}},
        {
            "lenses": {"ops": {"entity_types": ["incident"], "groups": ["writers"]}},
            "assignments": {"ops": ["user:ana"]},
        },
    ]
)
ROSTER_NEAR = st.one_of(
    st.just({}),
    st.just({"lenses": {"x": {"colour": "red"}}}),
    st.just({"lenses": {"x": {}}, "assignments": {"y": ["agent:a"]}}),
    st.just(["lenses"]),
    st.dictionaries(st.sampled_from(["lenses", "groups", "teams"]), GARBAGE, min_size=1, max_size=2),
)

REMEMBER_ARGS: dict = {
    "lens_id": (st.sampled_from(["dev", "dev", "seen"]), st.one_of(st.just("bad id!"), st.just("nope"), NEAR_TEXT)),
    "lenses": (_optional(st.just(["dev"])), st.one_of(st.just(["nope"]), st.just("dev"), st.just([5]))),
    "frame_id": (_optional(st.just(FromStore("frame"))), st.one_of(st.just(FromStore("frame", "closed")), NEAR_TEXT)),
    ("frame_update", "frame_id"): _stored("frame", "closed", "missing"),
    ("frame_close", "frame_id"): _stored("frame", "closed", "missing"),
    ("frame_get", "frame_id"): _stored("frame", "missing"),
    ("frame_history", "frame_id"): _stored("frame", "missing"),
    "decision_id": _stored("decision", "missing"),
    "interaction_id": _stored("interaction", "missing"),
    "receipt": _stored("receipt", "field", "signature", "extra", "key"),
    "scopes": (_optional(SCOPE_NAMES), st.one_of(st.just(["galaxy"]), st.just("user"), st.just([]))),
    "types": (_optional(st.lists(st.sampled_from(["fact.*", "decision.recorded", "*"]), max_size=2)), NAMES_NEAR),
    "tags": (_optional(st.lists(st.sampled_from(["checkout", "Cache"]), max_size=2)), NAMES_NEAR),
    "inputs": (_optional(REFS), REFS_NEAR),
    "suppress": (_optional(REFS), REFS_NEAR),
    "unsuppress": (_optional(REFS), REFS_NEAR),
    "actor_chain": (_optional(st.lists(st.sampled_from(["subsystem:watchdog", "agent:x"]), max_size=2)), NAMES_NEAR),
    **{
        name: (_optional(NAMES), NAMES_NEAR)
        for name in ("entity_types", "relationships", "watches", "groups", "cross_lens")
    },
    "capabilities": (_optional(CAPABILITIES), CAPABILITIES_NEAR),
    "permissions": (CAPABILITIES, CAPABILITIES_NEAR),
    "claim": (st.sampled_from(["Checkout is owned by Atlas", "Builds take 12 minutes"]), NEAR_TEXT),
    "source": (_optional(TEXT), NEAR_TEXT),
    "author": (_optional(TEXT), NEAR_TEXT),
    "entity_type": (_optional(st.sampled_from(["lesson", "metric"])), NEAR_TEXT),
    "consumer": (st.sampled_from(["agent:helper", "user:ana"]), st.one_of(st.just("helper"), NEAR_TEXT)),
    "group": (st.sampled_from(["writers", "contributors"]), st.one_of(st.just("a b"), NEAR_TEXT)),
    "intent": (st.sampled_from(["fix", "plan", "learn"]), st.one_of(st.just("daydream"), NEAR_TEXT)),
    "goal": (st.sampled_from(["checkout timeouts", "next quarter"]), NEAR_TEXT),
    "rationale": (st.sampled_from(["benchmarks first", "it is safe"]), NEAR_TEXT),
    "outcome": (_optional(TEXT), NEAR_TEXT),
    ("decision_outcome", "outcome"): (TEXT, NEAR_TEXT),
    "summary": (_optional(TEXT), NEAR_TEXT),
    "status": (_optional(st.sampled_from(["open", "closed"])), st.one_of(st.just("maybe"), NEAR_TEXT)),
    "max_sensitivity": (_optional(st.sampled_from(["low", "normal", "high"])), st.one_of(st.just("top"), NEAR_TEXT)),
    "ref": (st.sampled_from(["fact:abc", "decision:d1"]), st.one_of(st.just("nope"), NEAR_TEXT)),
    "verdict": (st.sampled_from(["useful", "not_useful"]), st.one_of(st.just("meh"), NEAR_TEXT)),
    "timestamp": (st.one_of(st.none(), INSTANT_GOOD), INSTANT_NEAR),
    "expires_at": (st.one_of(st.none(), INSTANT_GOOD), INSTANT_NEAR),
    "at": (st.one_of(st.none(), INSTANT_GOOD), INSTANT_NEAR),
    "since": (st.integers(0, 50), st.sampled_from([-1, "0", 1.5, True, 2**70])),
    "passes": (st.integers(1, 5), st.sampled_from([0, 6, "3", None])),
    "include_index": (st.booleans(), st.sampled_from(["yes", 1, None])),
    "next_steps": (
        _optional(st.lists(st.one_of(TEXT, st.just({"step": "ship", "assignee": "agent:helper"})), max_size=2)),
        st.one_of(st.just("ship"), st.just([{"step": "x", "status": "maybe"}]), st.just([{"task": "x"}]), st.just([5])),
    ),
    "preferences": (
        _optional(st.just({"priorities": {"lesson": 2.0}, "tags": ["code"], "half_life_days": 7})),
        st.one_of(st.just({"weights": {}}), st.just({"priorities": {"x": -1}}), st.just([1]), st.just({"tags": "x"})),
    ),
    "roster": (ROSTER_GOOD, ROSTER_NEAR),
    ("capture", "key"): (_optional(st.sampled_from(["claim:x", "oncall"])), st.one_of(st.just(""), NEAR_TEXT)),
    ("capture", "confidence"): (_optional(st.floats(0, 1)), st.sampled_from([1.5, -0.1, float("nan"), "high"])),
    ("decide", "decision"): (
        st.sampled_from(["act", "wait", "escalate", "no_op"]),
        st.one_of(st.just("maybe"), NEAR_TEXT),
    ),
    ("lens_define", "title"): (_optional(TEXT), NEAR_TEXT),
    ("capture", "entity"): (st.sampled_from(["checkout-service", "team-atlas"]), NEAR_TEXT),
}
