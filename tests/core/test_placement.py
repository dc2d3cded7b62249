"""Ontology-declared placement: the parser, and a test per branch of the decision tree."""

from __future__ import annotations

import pytest

from memory_core import Identity, Memory
from memory_core.errors import AdminRequired, InternalError
from memory_core.identity import Scope
from memory_core.placement import InvalidOntology, decide, parse_ontology

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service

ONTOLOGY = """# Acme ontology

Prose before the first type is ignored.

## service
- `@memory_scope` tenant
- `name`: what people call it
- `owner`: who to page

## person
- `email`: how to reach them

## preference
- `@memory_scope` user
"""
RUN = Identity(tenant="acme", user="ana", agent="helper")


def test_the_parser_reads_types_scopes_and_fields():
    ontology = parse_ontology(ONTOLOGY)
    assert set(ontology.types) == {"service", "person", "preference"}
    assert ontology.type("service").memory_scope == "tenant"
    assert ontology.type("Service").fields == (("name", "what people call it"), ("owner", "who to page"))
    assert ontology.type("person").memory_scope is None and ontology.type("preference").memory_scope == "user"


@pytest.mark.parametrize(
    "markdown",
    [
        "",
        "just prose, no type",
        "## service\n- `@memory_scope` galaxy\n",
        "## service\n- `name`: a\n\n## service\n- `owner`: b\n",
        "- `name`: a bullet before any type\n\n## service\n",
        "## two words\n- `name`: x\n",
    ],
    ids=["empty", "no-type", "unknown-scope", "duplicate-type", "orphan-bullet", "two-word-type"],
)
def test_a_bad_ontology_is_refused(markdown):
    with pytest.raises(InvalidOntology):
        parse_ontology(markdown)


def test_the_seed_example_places_checkout_api_in_the_tenant():
    placed = decide(parse_ontology(ONTOLOGY), "checkout-api", "service", RUN)
    assert placed.scope is Scope.TENANT and placed.reason == "placed_in_tenant"


@pytest.mark.parametrize(
    "ontology, subject, subject_type, identity, extra, reason",
    [
        (None, "checkout-api", "service", RUN, {}, "no_ontology"),
        (ONTOLOGY, "checkout-api", "database", RUN, {}, "type_undeclared"),
        (ONTOLOGY, "dana", "person", RUN, {}, "no_scope_declared"),
        (ONTOLOGY, "dark mode", "preference", RUN, {}, "declared_user"),
        (ONTOLOGY, "checkout-api", "service", RUN, {"known_types": ["person"]}, "subject_typed_inconsistently"),
        (ONTOLOGY, "ana", "service", RUN, {}, "subject_is_profile_owner"),
        (ONTOLOGY, "Ana Lima", "service", RUN, {"profile_owner": "ana lima"}, "subject_is_profile_owner"),
        (
            ONTOLOGY,
            "checkout-api",
            "service",
            Identity(tenant="acme", user="ana", isolated=True),
            {},
            "caller_isolated",
        ),
        (
            ONTOLOGY,
            "checkout-api",
            "service",
            Identity(tenant="acme", user="ana", memory_scopes=frozenset({Scope.USER})),
            {},
            "missing_tenant_grant",
        ),
        (
            ONTOLOGY,
            "checkout-api",
            "service",
            Identity(tenant="acme", user="ana", sql_scopes=frozenset({Scope.USER})),
            {},
            "missing_tenant_grant",
        ),
    ],
    ids=[
        "no-ontology",
        "undeclared-type",
        "no-scope",
        "declared-user",
        "inconsistent-type",
        "profile-owner",
        "profile-owner-named",
        "isolated",
        "no-memory-grant",
        "no-sql-grant",
    ],
)
def test_every_doubt_keeps_the_fact_in_the_user_scope(ontology, subject, subject_type, identity, extra, reason):
    placed = decide(parse_ontology(ontology) if ontology else None, subject, subject_type, identity, **extra)
    assert placed.scope is Scope.USER and placed.reason == reason and placed.detail


def test_the_missing_grant_names_both_halves():
    no_grants = Identity(
        tenant="acme", user="ana", memory_scopes=frozenset({Scope.USER}), sql_scopes=frozenset({Scope.USER})
    )
    placed = decide(parse_ontology(ONTOLOGY), "checkout-api", "service", no_grants)
    assert "memory_scopes and sql_scopes" in placed.detail


def test_ontology_set_is_admin_only_versioned_and_read_back(memory):
    admin = memory.for_run(Identity(tenant="acme", user="ops", admin=True))
    user = memory.for_run(RUN)
    with pytest.raises(AdminRequired):
        user.ontology_set(ONTOLOGY)
    assert user.ontology_get() is None and user.placement("checkout-api", "service").reason == "no_ontology"
    assert admin.ontology_set(ONTOLOGY).version == 1
    assert admin.ontology_set(ONTOLOGY.replace("tenant", "user")).version == 2
    assert user.ontology_get().version == 2
    assert user.placement("checkout-api", "service").reason == "declared_user"
    other_tenant = memory.for_run(Identity(tenant="globex", user="ana"))
    assert other_tenant.ontology_get() is None
    assert memory.verify_audit().ok


# -- placed writes: both halves (the row and its graph facts) in the decided scope --------------

CHECKOUT = {
    "subject": "checkout-api",
    "subject_type": "service",
    "relations": [{"subject": "checkout-api", "relation": "owned by", "object": "team payments"}],
}


def _declare_ontology(memory):
    """A tenant admin declares ONTOLOGY: service subjects are placed in the tenant scope."""
    memory.for_run(Identity(tenant="acme", user="ops", admin=True)).ontology_set(ONTOLOGY)


@pytest.fixture
def placed(memory):
    _declare_ontology(memory)
    return memory


def _halves(tool, scope):
    row = tool.get("checkout-owner", scope=scope)
    facts = [(f.subject, f.relation, f.object) for f in tool.list_facts("checkout-api", scope=scope)]
    return row, facts


def test_a_placed_fact_writes_both_halves_in_the_tenant_scope(placed):
    tool = placed.for_run(RUN)
    result = tool.set("checkout-owner", "checkout-api is owned by team payments", scope="auto", **CHECKOUT)
    assert result.details["placement"]["reason"] == "placed_in_tenant"
    assert result.rows[0].scope is Scope.TENANT
    row, facts = _halves(tool, "tenant")
    assert row.value == "checkout-api is owned by team payments"
    assert facts == [("checkout-api", "owned_by", "team payments")]
    assert _halves(tool, "user") == (None, [])
    colleague = placed.for_run(Identity(tenant="acme", user="bob"))
    assert _halves(colleague, "tenant")[1] == facts  # the tenant's knowledge, shared
    assert _halves(placed.for_run(Identity(tenant="globex", user="ana")), "tenant") == (None, [])


@pytest.mark.parametrize(
    "identity, subject_type, reason",
    [
        (RUN, "database", "type_undeclared"),
        (RUN, "person", "no_scope_declared"),
        (RUN, "preference", "declared_user"),
        (Identity(tenant="acme", user="ana", isolated=True), "service", "caller_isolated"),
        (Identity(tenant="acme", user="ana", sql_scopes=frozenset({Scope.USER})), "service", "missing_tenant_grant"),
    ],
)
def test_every_doubt_writes_both_halves_in_the_user_scope(placed, identity, subject_type, reason):
    tool = placed.for_run(identity)
    result = tool.set(
        "checkout-owner",
        "checkout-api is owned by team payments",
        scope="auto",
        **{**CHECKOUT, "subject_type": subject_type},
    )
    assert result.details["placement"]["reason"] == reason and result.rows[0].scope is Scope.USER
    row, facts = _halves(tool, "user")
    assert row is not None and facts == [("checkout-api", "owned_by", "team payments")]


def test_a_subject_the_graph_types_otherwise_stays_with_the_user(placed):
    tool = placed.for_run(RUN)
    tool.set(
        "who",
        "checkout-api is my cat",
        subject="checkout-api",
        subject_type="pet",
        relations=[["checkout-api", "is a", "cat"]],
    )
    result = tool.set("checkout-owner", "checkout-api is owned by team payments", scope="auto", **CHECKOUT)
    assert result.details["placement"]["reason"] == "subject_typed_inconsistently"
    assert "pet" in result.details["placement"]["detail"]


def test_the_profile_owner_stays_in_the_user_scope(placed):
    tool = placed.for_run(RUN)
    result = tool.set("ana-owner", "ana owns checkout-api", scope="auto", subject="ana", subject_type="service")
    assert result.details["placement"]["reason"] == "subject_is_profile_owner"


def test_placement_needs_a_subject_and_its_type(placed):
    from memory_core.errors import InvalidInput

    with pytest.raises(InvalidInput, match="subject and subject_type"):
        placed.for_run(RUN).set("k", "v", scope="auto", subject="checkout-api")


def test_a_failure_writing_the_graph_half_writes_neither_half(home, clock):
    from tests.conftest import store_snapshot
    from tests.faults import FaultyStore

    store = FaultyStore.open(home)
    with Memory(store, clock) as placed:
        _declare_ontology(placed)
        tool = placed.for_run(RUN)
        before = store_snapshot(placed)
        store.versions.fail_inside(lambda batch: bool(batch.graph), OSError("disk full while writing the triples"))
        with pytest.raises((OSError, InternalError)):  # through the service: an internal error, typed
            tool.set("checkout-owner", "checkout-api is owned by team payments", scope="auto", **CHECKOUT)
        assert [bool(b.graph) and bool(b.rows) for b in store.versions.failed] == [True]  # both halves, one write
        assert store_snapshot(placed) == before
        assert _halves(tool, "tenant") == (None, [])
        tool.set("checkout-owner", "checkout-api is owned by team payments", scope="auto", **CHECKOUT)
        assert _halves(tool, "tenant")[1] == [("checkout-api", "owned_by", "team payments")]
