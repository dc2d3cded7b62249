"""``render`` as a property: over random substrates (facts, captures under lenses, relations,
decision traces, in three scopes, at three sensitivities), random lens contracts, random grants
and random frame suppressions, a view holds exactly the items some worn lens admits in the scopes
the identity may read, less the suppressed ones; and wearing one more lens never removes an item.

The oracle below is written from the contract's words, apart from ``substrate.lenses``."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import FixedClock, Identity, Memory
from tests.conftest import T0

TYPES = ("lesson", "metric", "general", "decision")
RELATIONS = ("owns", "works_at", "likes")
SCOPES = ("agent", "user", "tenant")
SENSITIVITY = ("low", "normal", "high")
LENSES = ("l0", "l1", "l2", "l3")
TENANT = "acme"


@dataclass(frozen=True)
class Written:
    plane: str
    key: str
    scope: str
    entity_type: str | None
    relation: str | None
    lens: str | None
    sensitivity: str


def admitted_by(contract: dict, item: Written) -> bool:
    if item.scope not in contract["scopes"]:
        return False
    if SENSITIVITY.index(item.sensitivity) > SENSITIVITY.index(contract["max_sensitivity"]):
        return False
    cross = contract["cross_lens"]
    if item.lens is not None and item.lens != contract["id"] and "*" not in cross and item.lens not in cross:
        return False
    if item.relation is not None:
        return "*" in contract["relationships"] or item.relation in contract["relationships"]
    return "*" in contract["entity_types"] or item.entity_type in contract["entity_types"]


def _names(pool):
    return st.one_of(st.just(["*"]), st.lists(st.sampled_from(pool), min_size=0, max_size=len(pool), unique=True))


contracts = st.fixed_dictionaries(
    {
        "entity_types": _names(TYPES),
        "relationships": _names(RELATIONS),
        "scopes": st.lists(st.sampled_from(SCOPES), min_size=1, max_size=3, unique=True),
        "cross_lens": _names(LENSES),
        "max_sensitivity": st.sampled_from(SENSITIVITY),
    }
)
writes = st.lists(
    st.tuples(
        st.sampled_from(("set", "capture", "relation", "decide")),
        st.sampled_from(SCOPES),
        st.sampled_from(TYPES[:3]),
        st.sampled_from(SENSITIVITY),
        st.sampled_from(LENSES),
        st.sampled_from(RELATIONS),
    ),
    min_size=1,
    max_size=12,
)


def _write(
    bob, n: int, op: str, scope: str, memory_type: str, sensitivity: str, lens: str, relation: str
) -> list[Written]:
    key = f"k{n}"
    if op == "set":
        row = bob.set(key, f"value {n}", scope=scope, memory_type=memory_type, sensitivity=sensitivity).version
        return [Written("fact", key, scope, memory_type, None, None, row.sensitivity)]  # "raise only": low is normal
    if op == "capture":
        bob.capture(f"entity{n}", f"claim {n}", lens_id=lens, key=key, entity_type=memory_type, scope=scope)
        return [Written("fact", key, scope, memory_type, None, lens, "normal")]
    if op == "relation":
        bob.set(key, f"fact {n}", scope=scope, relations=[[f"s{n}", relation, f"o{n}"]])  # the row, and its relation
        return [
            Written("fact", key, scope, "general", None, None, "normal"),
            Written("relation", f"s{n} {relation} o{n}", scope, None, relation, None, "normal"),
        ]
    trace = bob.decide("act", f"because {n}", lens_id=lens, scope=scope)
    return [Written("decision", trace.decision_id, scope, "decision", None, lens, "normal")]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lens_contracts=st.lists(contracts, min_size=4, max_size=4),
    plan=writes,
    grants=st.lists(st.sampled_from(SCOPES), min_size=1, max_size=3, unique=True),
    worn=st.lists(st.sampled_from(LENSES), min_size=1, max_size=3, unique=True),
    extra=st.sampled_from(LENSES),
    suppress=st.lists(st.integers(0, 30), max_size=4),
)
def test_a_view_is_exactly_what_the_worn_lenses_admit_and_more_lenses_only_widen(
    lens_contracts, plan, grants, worn, extra, suppress
):
    with tempfile.TemporaryDirectory() as folder, Memory.open(folder, clock=FixedClock(T0)) as memory:
        admin = memory.for_run(Identity(tenant=TENANT, user="root", admin=True))
        contracts = {}
        for lens_id, body in zip(LENSES, lens_contracts):
            # Every lens can capture and decide (so the plan can write through it): capabilities
            # decide nothing about what a view shows.
            admin.lens_define(lens_id, capabilities=["read", "capture", "decide"], **{**body, "scopes": body["scopes"]})
            admin.lens_assign(lens_id, "agent:bob")
            contracts[lens_id] = {**body, "id": lens_id}
        writer = memory.for_run(Identity(tenant=TENANT, user="ana", agent="bob"))
        written = [w for n, step in enumerate(plan) for w in _write(writer, n, *step)]
        reader = memory.for_run(Identity(tenant=TENANT, user="ana", agent="bob", memory_scopes=frozenset(grants)))
        everything = {(i.plane, i.key): i.ref for i in writer.render(lenses=list(LENSES)).items}
        refs = sorted(everything.values())
        hidden = {refs[i % len(refs)] for i in suppress} if refs else set()
        frame = reader.frame_open("review", "the property", lenses=worn)
        if hidden:
            reader.frame_update(frame.frame_id, suppress=sorted(hidden))

        view = reader.render(lenses=worn, frame_id=frame.frame_id)
        shown = {(i.plane if i.plane != "note" else "fact", i.key) for i in view.items}
        expected = {
            (w.plane, w.key)
            for w in written
            if w.scope in grants
            and any(admitted_by(contracts[lens], w) for lens in worn)
            and everything.get((w.plane, w.key)) not in hidden
        }
        assert shown == expected
        assert all(i.scope in grants for i in view.items)
        assert {d.ref for d in view.receipt.disclosed} == {i.ref for i in view.items}

        wider = reader.render(lenses=sorted({*worn, extra}), frame_id=frame.frame_id)
        assert {i.ref for i in view.items} <= {i.ref for i in wider.items}


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lens_contracts=st.lists(contracts, min_size=4, max_size=4),
    plan=writes,
    grants=st.lists(st.sampled_from(SCOPES), min_size=1, max_size=3, unique=True),
    worn=st.lists(st.sampled_from(LENSES), min_size=1, max_size=3, unique=True),
    extra=st.sampled_from(LENSES),
    suppress=st.lists(st.integers(0, 30), max_size=4),
)
def test_the_view_property_at_length(lens_contracts, plan, grants, worn, extra, suppress):
    test_a_view_is_exactly_what_the_worn_lenses_admit_and_more_lenses_only_widen.hypothesis.inner_test(
        lens_contracts, plan, grants, worn, extra, suppress
    )
