"""Lenses as the store keeps them: defined, versioned, expired, assigned, unioned; permission
groups; the ready-made roster; and every refusal typed, leaving the store as it was."""

from __future__ import annotations

import tomllib
from datetime import timedelta
from importlib import resources

import pytest

from memory_core import Identity
from memory_core.errors import (
    AdminRequired,
    CapabilityMissing,
    InvalidInput,
    LensExpired,
    LensNotFound,
    LensNotWorn,
    UnknownOption,
)
from tests.conftest import store_snapshot
from tests.remember_setup import ADMIN, lensed

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service


def test_a_lens_is_versioned_and_lists_its_capabilities_with_its_groups(memory):
    admin, bob, _ = lensed(memory)
    developer = next(i for i in admin.lenses() if i.lens_id == "developer")
    assert developer.version == 1 and set(developer.capabilities) == {"read", "capture", "decide"}
    assert developer.worn_by == ("agent:bob",)
    changed = admin.lens_define("developer", entity_types=["lesson"], capabilities=["read"])
    assert changed.version == 2 and changed.capabilities == ("read",)  # no group any more
    assert [i.lens_id for i in bob.lenses()] == ["analyst", "developer"]  # what bob wears
    assert bob.lenses()[1].worn_by == ()  # who else wears a lens is an admin's to know


def test_wearing_is_checked_lens_by_lens(memory):
    admin, bob, eve = lensed(memory)
    with pytest.raises(LensNotWorn):
        eve.render(lenses=["developer"])
    with pytest.raises(LensNotFound):
        bob.render(lenses=["nope"])
    assert admin.render(lenses=["developer", "auditor"]).lenses == ("developer", "auditor")  # a principal
    assert eve.render().lenses == ("analyst",)  # default: the lenses assigned


def test_an_expired_or_unassigned_lens_cannot_be_worn(memory, clock):
    admin, bob, eve = lensed(memory)
    admin.lens_expire("analyst", at=(clock.now() + timedelta(hours=1)).isoformat())
    eve.render()
    clock.advance(timedelta(hours=2))
    with pytest.raises(LensExpired):
        eve.render(lenses=["analyst"])
    with pytest.raises(LensNotWorn):  # nothing left to wear by default
        eve.render()
    admin.lens_unassign("developer", "agent:bob")
    with pytest.raises(LensNotWorn):
        bob.render(lenses=["developer"])


def test_capabilities_union_over_worn_lenses(memory):
    _, bob, eve = lensed(memory)
    with pytest.raises(CapabilityMissing):
        eve.decide("act", "ship it", lens_id="analyst")
    assert bob.decide("act", "ship it", lens_id="developer").decision == "act"


def test_refusals_are_typed_and_write_nothing(memory, tool_for):
    admin, bob, _ = lensed(memory)
    before = store_snapshot(memory)
    with pytest.raises(AdminRequired):
        bob.lens_define("mine")
    with pytest.raises(AdminRequired):
        bob.lens_assign("developer", "agent:bob")
    with pytest.raises(InvalidInput):
        admin.lens_define("bad", capabilities=["fly"])
    with pytest.raises(InvalidInput):
        admin.lens_define("bad", scopes=["galaxy"])
    with pytest.raises(InvalidInput):
        admin.lens_define("bad id!")
    with pytest.raises(InvalidInput):
        admin.lens_assign("developer", "bob")  # a consumer is agent:ID or user:ID
    with pytest.raises(LensNotFound):
        admin.lens_assign("nope", "agent:bob")
    with pytest.raises(UnknownOption):
        admin.lens_define("bad", preferences={"weights": {}})
    assert store_snapshot(memory) == before


def test_a_tenants_lenses_are_its_own(memory, tool_for):
    lensed(memory)
    other = memory.for_run(Identity(tenant="globex", user="root", admin=True))
    assert other.lenses() == []
    with pytest.raises(LensNotFound):
        other.render(lenses=["developer"])


def test_the_ready_made_roster_loads_in_one_go(memory):
    admin = memory.for_run(ADMIN)
    roster = tomllib.loads((resources.files("memory_core.substrate") / "rosters" / "seven.toml").read_text())
    roster["assignments"] = {"reviewer": ["user:rita"], "developer": ["agent:bob"]}
    loaded = admin.lens_roster_load(roster)
    assert set(loaded.lenses) == {"analyst", "developer", "steward", "architect", "reviewer", "watchdog", "scheduler"}
    assert loaded.assignments == 2 and len(loaded.groups) == 3
    reviewer = next(i for i in admin.lenses() if i.lens_id == "reviewer")
    assert set(reviewer.capabilities) == {"read", "approve"} and reviewer.worn_by == ("user:rita",)
    again = admin.lens_roster_load(roster)  # a second load is a new version, and assigns nothing twice
    assert again.assignments == 0 and next(i for i in admin.lenses() if i.lens_id == "reviewer").version == 2


def test_a_roster_that_names_an_unknown_lens_loads_nothing(memory):
    admin = memory.for_run(ADMIN)
    before = store_snapshot(memory)
    with pytest.raises(InvalidInput):
        admin.lens_roster_load({"lenses": {"a": {}}, "assignments": {"b": ["agent:x"]}})
    assert store_snapshot(memory) == before


def test_a_lens_that_may_not_read_adds_nothing_to_a_read(memory):
    admin, bob, eve = lensed(memory)
    admin.lens_define("dropbox", entity_types=["secret"], capabilities=["capture"])
    admin.lens_assign("dropbox", "agent:eve")
    eve.capture("payroll", "the CEO's salary is 1M", lens_id="dropbox", entity_type="secret")
    with pytest.raises(CapabilityMissing):
        eve.render(lenses=["dropbox"])
    for view in (eve.render(lenses=["analyst", "dropbox"]), eve.render()):
        assert view.lenses == ("analyst",) and all("salary" not in i.text for i in view.items)
    seen = eve.events(lenses=["analyst", "dropbox"])
    assert all(f.value_after != "the CEO's salary is 1M" for e in seen.events for f in e.facts)


def test_an_assignment_event_does_not_say_who_wears_the_lens(memory):
    admin, bob, _ = lensed(memory)
    assigned = bob.events(types=["lens.assigned"], scopes=["tenant"]).events
    assert assigned and all("consumer" not in e.summary and "agent:" not in str(e.summary) for e in assigned)


def test_a_roster_naming_a_consumer_twice_assigns_once_and_the_audit_holds(memory):
    admin = memory.for_run(ADMIN)
    loaded = admin.lens_roster_load({"lenses": {"q": {}}, "assignments": {"q": ["agent:zed", "agent:zed"]}})
    assert loaded.assignments == 1 and memory.verify_audit().ok
