"""Each phase of a point write as a function, and each refusal through the tool writing nothing."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from memory_core import Identity, Kind, Memory, Status
from memory_core.errors import (
    Blacklisted,
    CharLimitExceeded,
    KeyHoldsFact,
    Locked,
    PinnedConflict,
    PreconditionFailed,
    SourceClassRefused,
)
from memory_core.identity import Namespace, Scope
from memory_core.model import Provenance
from memory_core.values import canonical_json, content_sha256
from memory_core.write import phases
from memory_core.write.request import SetState
from memory_core.write.settle import make_request
from memory_core.write.tenant_config import BUILTIN_TYPES, Policy, TenantConfig, TypeConfig, WriteConfig
from tests.conftest import T0, store_snapshot

NS = Namespace("acme", Scope.USER, "ana")
PROV = Provenance(tenant="acme", actor="agent:helper", origin="test")


def ids():
    counter = iter(range(10_000))
    return lambda: f"id{next(counter)}"


def state_for(value="dark mode", *, config=None, states=(), **options) -> SetState:
    request = make_request(NS, options.pop("key", "theme"), value, PROV, T0, **options)
    state = phases.resolve_type(SetState(request, config or WriteConfig()))
    return phases.fetch_live(state, list(states))


def run_to_rows(state: SetState) -> SetState:
    for phase in (phases.guard, phases.expiry, phases.prepare, phases.preconditions):
        state = phase(state)
    return phases.build_rows(state, ids())


def stored(value="dark mode", **changes):
    """A fact as the store would hold it after a plain write."""
    row = run_to_rows(state_for(value)).rows[-1]
    return dataclasses.replace(row, **changes)


# -- resolve_type -------------------------------------------------------------------------------


def test_resolve_type_retypes_and_names_the_type_asked_for():
    config = WriteConfig(types={**BUILTIN_TYPES, "pref": TypeConfig("pref", retype_to="preference")})
    state = state_for(config=config, memory_type="pref")
    assert (state.memory_type, state.retyped_from) == ("preference", "pref")
    assert state_for(memory_type="general").retyped_from is None


# -- fetch_live ---------------------------------------------------------------------------------


def test_fetch_live_finds_the_fact_live_now_and_the_head_version():
    old = stored(
        "light mode",
        valid_at=T0 - timedelta(days=9),
        invalid_at=T0 - timedelta(days=2),
        version=1,
        status=Status.SUPERSEDED,
    )
    now = stored("dark mode", fact_id="f2", id="r2", valid_at=T0 - timedelta(days=2), version=2)
    state = state_for(states=[old, now])
    assert state.live.fact_id == "f2" and state.head_version == 2


# -- guard --------------------------------------------------------------------------------------


def test_guard_same_bytes_is_a_restatement():
    state = phases.guard(state_for("dark mode", states=[stored("dark mode")]))
    assert state.restatement


def test_guard_refuses_a_changed_value_on_a_locked_fact():
    with pytest.raises(Locked) as refused:
        phases.guard(state_for("light mode", states=[stored(locked=True)]))
    assert refused.value.status == 423


def test_guard_refuses_a_changed_value_on_a_pinned_fact_unless_the_write_pins():
    with pytest.raises(PinnedConflict) as refused:
        phases.guard(state_for("light mode", states=[stored(pinned=True)]))
    assert refused.value.status == 409 and refused.value.code == "PINNED_CONFLICT"
    assert not phases.guard(state_for("light mode", states=[stored(pinned=True)], pin=True)).restatement


def test_guard_lets_a_locked_fact_be_restated():
    assert phases.guard(state_for("dark mode", states=[stored(locked=True)])).restatement


# -- expiry -------------------------------------------------------------------------------------


def test_expiry_takes_the_earliest_of_ttl_type_and_tenant_retention():
    config = WriteConfig(
        tenant=TenantConfig(retention_days=30),
        types={**BUILTIN_TYPES, "otp": TypeConfig("otp", retention_days=1, on_expire="anonymize")},
    )
    state = phases.expiry(phases.guard(state_for(config=config, memory_type="otp", ttl_seconds=7200)))
    assert state.expires_at == T0 + timedelta(hours=2) and state.on_expire == "anonymize"
    state = phases.expiry(phases.guard(state_for(config=config, memory_type="otp")))
    assert state.expires_at == T0 + timedelta(days=1)
    assert phases.expiry(phases.guard(state_for())).expires_at is None


def test_expiry_of_a_restatement_keeps_the_stored_one_and_a_locked_fact_refuses_a_new_one():
    prior = stored(expires_at=T0 + timedelta(days=3))
    assert phases.expiry(phases.guard(state_for(states=[prior]))).expires_at == T0 + timedelta(days=3)
    with pytest.raises(Locked) as refused:
        phases.expiry(phases.guard(state_for(states=[dataclasses.replace(prior, locked=True)], ttl_seconds=60)))
    assert refused.value.details["refused_action"] == "expire"


# -- prepare ------------------------------------------------------------------------------------


def test_prepare_refuses_a_value_over_the_char_limit():
    config = WriteConfig(tenant=TenantConfig(char_limit=20))
    with pytest.raises(CharLimitExceeded) as refused:
        phases.prepare(phases.expiry(phases.guard(state_for("x" * 30, config=config))))
    assert (refused.value.status, refused.value.code) == (422, "CHAR_LIMIT_EXCEEDED")


def test_prepare_refuses_a_blacklisted_value_without_echoing_it():
    config = WriteConfig(tenant=TenantConfig(blacklist=(r"(?i)internal codename \w+",)))
    with pytest.raises(Blacklisted) as refused:
        phases.prepare(phases.expiry(phases.guard(state_for("the internal codename BLUEBIRD", config=config))))
    assert refused.value.code == "BLACKLISTED" and "BLUEBIRD" not in refused.value.message


@pytest.mark.parametrize(
    "value, named, tier",
    [
        ("card 4111 1111 1111 1111", None, "high"),
        ("my ssn is 078-05-1120", None, "high"),
        ("password: hunter2", None, "high"),
        ("prefers dark mode", None, "normal"),
        ("prefers dark mode", "high", "high"),
        ("card 4111 1111 1111 1111", "low", "high"),  # detection raises a named tier, never lowers it
    ],
)
def test_prepare_sets_the_sensitivity_tier(value, named, tier):
    state = phases.prepare(phases.expiry(phases.guard(state_for(value, sensitivity=named))))
    assert state.sensitivity == tier


def test_prepare_gives_a_high_row_the_sensitive_retention():
    config = WriteConfig(tenant=TenantConfig(sensitive_retention_days=7))
    state = phases.prepare(phases.expiry(phases.guard(state_for("password: hunter2", config=config))))
    assert state.expires_at == T0 + timedelta(days=7)


def test_prepare_lets_a_caller_only_downgrade_the_source_class():
    assert phases.prepare(phases.expiry(phases.guard(state_for()))).source_class == "stated"
    assert phases.prepare(phases.expiry(phases.guard(state_for(source_class="derived")))).source_class == "derived"
    with pytest.raises(SourceClassRefused):
        phases.prepare(phases.expiry(phases.guard(state_for(source_class="stated"))))
    with pytest.raises(SourceClassRefused):
        phases.prepare(phases.expiry(phases.guard(state_for(source_class="verified"))))


# -- preconditions ------------------------------------------------------------------------------


def prepared(state):
    return phases.prepare(phases.expiry(phases.guard(state)))


def test_a_proposal_may_not_overwrite_an_established_fact():
    with pytest.raises(KeyHoldsFact):
        phases.preconditions(prepared(state_for("light mode", states=[stored()], proposed=True)))
    proposal = stored(status=Status.PROPOSED)
    phases.preconditions(prepared(state_for("light mode", states=[proposal], proposed=True)))


def test_if_match_sha256_must_name_the_live_value():
    sha = content_sha256(canonical_json("dark mode"))
    phases.preconditions(prepared(state_for("light mode", states=[stored()], if_match_sha256=sha)))
    with pytest.raises(PreconditionFailed) as refused:
        phases.preconditions(prepared(state_for("light mode", states=[stored()], if_match_sha256="0" * 64)))
    assert (refused.value.status, refused.value.code) == (409, "PRECONDITION_FAILED")
    with pytest.raises(PreconditionFailed):
        phases.preconditions(prepared(state_for("light mode", if_match_sha256=sha)))  # nothing live


# -- build_rows ---------------------------------------------------------------------------------


def test_build_rows_restates_with_reinforcement_and_supersedes_a_changed_value():
    prior = stored()
    again = run_to_rows(state_for("dark mode", states=[prior]))
    assert [r.op.value for r in again.rows] == ["restate"] and again.rows[0].reinforcement_count == 1
    changed = run_to_rows(state_for("light mode", states=[prior], valid_at=T0 + timedelta(days=1)))
    closed, new = changed.rows
    assert closed.status is Status.SUPERSEDED and closed.superseded_by == new.id
    assert new.status is Status.ACTIVE and new.value == "light mode"


def test_build_rows_writes_a_proposal_as_proposed():
    assert run_to_rows(state_for(proposed=True)).rows[-1].status is Status.PROPOSED


# -- which rows are embedded and peer-checked ----------------------------------------------------


@pytest.mark.parametrize(
    "options, embedded, checked",
    [
        ({}, True, True),
        ({"kind": "note"}, True, False),
        ({"memory_type": "episodic"}, False, False),
        ({"sensitivity": "high"}, False, False),
    ],
)
def test_only_embedded_new_facts_meet_the_peer_check(options, embedded, checked):
    state = run_to_rows(state_for(**options))
    assert (phases.embedded(state), phases.needs_peer_check(state)) == (embedded, checked)


def test_append_only_skips_the_peer_check():
    config = WriteConfig(tenant=TenantConfig(policy=Policy.APPEND_ONLY))
    assert not phases.needs_peer_check(run_to_rows(state_for(config=config)))


# -- refusals through the tool write nothing -----------------------------------------------------


@pytest.fixture
def wmemory(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as m:
        yield m


def admin_tool(memory):
    return memory.for_run(Identity(tenant="acme", user="ana", agent="helper", admin=True))


@pytest.mark.parametrize(
    "setup, write, error",
    [
        (lambda t: (t.set("theme", "dark mode"), t.lock("theme")), lambda t: t.set("theme", "light mode"), Locked),
        (
            lambda t: (t.set("theme", "dark mode"), t.pin("theme")),
            lambda t: t.set("theme", "light mode"),
            PinnedConflict,
        ),
        (lambda t: t.configure(char_limit=10), lambda t: t.set("bio", "a rather long value"), CharLimitExceeded),
        (lambda t: t.configure(blacklist=["secret project"]), lambda t: t.set("x", "the secret project"), Blacklisted),
        (lambda t: t.set("theme", "dark mode"), lambda t: t.set("theme", "light", proposed=True), KeyHoldsFact),
        (
            lambda t: t.set("theme", "dark mode"),
            lambda t: t.set("theme", "light", if_match_sha256="0" * 64),
            PreconditionFailed,
        ),
        (lambda t: None, lambda t: t.set("x", "y", source_class="stated"), SourceClassRefused),
    ],
)
def test_a_refused_write_leaves_the_store_exactly_as_it_was(wmemory, setup, write, error):
    tool = admin_tool(wmemory)
    setup(tool)
    before = store_snapshot(wmemory)
    with pytest.raises(error):
        write(tool)
    assert store_snapshot(wmemory) == before


def test_a_dry_run_answers_the_verdict_and_writes_nothing_not_even_an_audit_row(wmemory):
    tool = admin_tool(wmemory)
    tool.set("theme", "dark mode")
    before = store_snapshot(wmemory)
    answer = tool.set("theme", "light mode", dry_run=True)
    assert answer.verdict == "superseded" and answer.details["dry_run"] and answer.rows == ()
    assert store_snapshot(wmemory) == before


def test_the_answer_names_retyped_from(wmemory):
    tool = admin_tool(wmemory)
    tool.configure_type("pref", retype_to="preference")
    result = tool.set("theme", "dark mode", memory_type="pref")
    assert result.details["retyped_from"] == "pref" and result.version.memory_type == "preference"


def test_a_high_row_is_stored_but_never_indexed(wmemory):
    tool = admin_tool(wmemory)
    result = tool.set("card", "card 4111 1111 1111 1111")
    assert result.version.sensitivity == "high" and tool.get("card").value.startswith("card")
    wmemory.flush()
    assert result.version.fact_id not in wmemory.projector.index.heads()
    assert "card" not in [h.key for h in tool.recall("card 4111").hits]


def test_each_write_leaves_one_hash_only_audit_row(wmemory):
    tool = admin_tool(wmemory)
    before = len(wmemory.store.versions.audit_rows())
    tool.set("theme", "dark mode")
    tool.set("theme", "light mode")
    rows = wmemory.store.versions.audit_rows()[before:]
    assert [r.entry.op for r in rows] == ["set", "set"]
    assert all("mode" not in repr(r.entry) for r in rows)  # hashes and ids, never the value
    assert wmemory.verify_audit().ok


def test_a_kind_other_than_fact_is_never_peer_checked(wmemory):
    tool = admin_tool(wmemory)
    tool.set("a", "User prefers dark mode", kind=Kind.NOTE)
    result = tool.set("b", "User prefers light mode", kind=Kind.NOTE)
    assert result.verdict == "created" and result.details["peer_check"] == "skipped"
