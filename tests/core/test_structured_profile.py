"""Structured profiles (docs/workers.md): a schema is checked whole and versioned; each user's
profile is built from their live facts, held to the schema, through the write path; it is rebuilt
exactly once after a change of its sources and never without one; ``profile`` says when it is
stale; ``get_context`` packs it first, marked derived, within the budget."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from memory_core import Identity
from memory_core.errors import AdminRequired, InvalidInput
from memory_core.profiles import PROFILE_ACTOR, PROFILE_KEY, source_digest
from tests.remember_setup import ADMIN, BOB, define_lenses

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service

SCHEMA = {
    "home_city": {"type": "string", "description": "where the user lives", "from": {"keys": ["home-city"]}},
    "age": {"type": "integer", "description": "years", "from": {"keys": ["age"]}},
    "likes": {"type": "array", "from": {"memory_types": ["preference"]}, "max_items": 3},
    "vegetarian": {"type": "boolean", "from": {"memory_types": ["diet"], "keys": ["diet:*"]}},
}


def setup(memory, *, jazz_ttl=None, diet_until=None):
    """Ana's five sources (and two facts that feed nothing) under the tenant's schema."""
    admin, ana = memory.for_run(ADMIN), memory.for_run(BOB)
    admin.profile_schema_set(SCHEMA)
    ana.set("home-city", "Porto")
    ana.set("age", "41")
    ana.set("like-tea", "green tea", memory_type="preference")
    ana.set("like-jazz", "jazz", memory_type="preference", ttl_seconds=jazz_ttl)
    ana.set("diet:vegetarian", "yes", memory_type="diet", invalid_at=diet_until)
    ana.set("diet-note", "no", memory_type="diet")  # the key does not match diet:*: feeds nothing
    ana.set("shoe-size", "39")  # in no property
    return admin, ana


def schema_rows(memory) -> int:
    return memory.store.unchecked_sql("SELECT count(*) AS n FROM profile_schemas")[0]["n"]


def history(memory):
    """The profile's builds: each is a ``set`` row (the one it replaced gets a ``supersede`` row)."""
    return [v for v in memory.for_run(BOB).history(PROFILE_KEY) if v.op.value == "set"]


BAD = [
    ("not a mapping", ["home_city"]),
    ("no property", {}),
    ("a bad name", {"Home City": SCHEMA["home_city"]}),
    ("an unknown type", {"x": {"type": "date", "from": {"keys": ["x"]}}}),
    ("no from", {"x": {"type": "string"}}),
    ("an empty from", {"x": {"type": "string", "from": {}}}),
    ("an unknown from field", {"x": {"type": "string", "from": {"keys": ["x"], "tags": ["y"]}}}),
    ("an unknown field", {"x": {"type": "string", "from": {"keys": ["x"]}, "default": "Porto"}}),
    ("max_items on a string", {"x": {"type": "string", "from": {"keys": ["x"]}, "max_items": 3}}),
    ("max_items out of range", {"x": {"type": "array", "from": {"keys": ["x"]}, "max_items": 0}}),
    ("fed from profiles", {"x": {"type": "string", "from": {"memory_types": ["profile"]}}}),
    ("a blank key pattern", {"x": {"type": "string", "from": {"keys": [" "]}}}),
    ("one bad property of two", {**SCHEMA, "x": {"type": "string", "from": {"keys": "x"}}}),
]


@pytest.mark.parametrize("why, schema", BAD, ids=[b[0] for b in BAD])
def test_a_bad_schema_is_refused_typed_and_stores_nothing(memory, why, schema):
    admin = memory.for_run(ADMIN)
    with pytest.raises(InvalidInput) as refused:
        admin.profile_schema_set(schema)
    assert refused.value.code == "INVALID_INPUT" and refused.value.details.get("field", "").startswith("properties")
    assert admin.profile_schema() is None and schema_rows(memory) == 0


def test_who_may_set_a_schema_and_where(memory):
    ana = memory.for_run(BOB)
    with pytest.raises(AdminRequired):
        ana.profile_schema_set(SCHEMA)  # the tenant's: an admin's
    with pytest.raises(InvalidInput) as refused:
        ana.profile_schema_set(SCHEMA, scope="agent")
    assert refused.value.details["field"] == "scope"
    assert schema_rows(memory) == 0
    mine = ana.profile_schema_set({"city": SCHEMA["home_city"]}, scope="user")  # a user's own: theirs
    assert (mine.scope, mine.owner_id, mine.version, mine.actor) == ("user", "ana", 1, "agent:bob")


def test_a_schema_is_versioned_and_the_same_schema_again_is_no_new_version(memory):
    admin = memory.for_run(ADMIN)
    first = admin.profile_schema_set(SCHEMA)
    respelled = {name: dict(spec) for name, spec in reversed(list(SCHEMA.items()))}
    respelled["likes"]["from"] = {"memory_types": ["preference", "preference"]}
    assert admin.profile_schema_set(respelled) == first  # the same schema, however spelled
    second = admin.profile_schema_set({**SCHEMA, "team": {"type": "string", "from": {"keys": ["team"]}}})
    assert (first.version, second.version) == (1, 2) and first.schema_hash != second.schema_hash
    assert admin.profile_schema().version == 2 and schema_rows(memory) == 2
    assert first.properties["likes"] == {
        "type": "array",
        "description": "",
        "from": {"memory_types": ["preference"]},
        "max_items": 3,
    }
    audits = memory.store.unchecked_sql("SELECT actor FROM audit_log WHERE op = 'profile_schema_set'")
    assert audits == [{"actor": "user:root"}] * 2
    assert memory.verify_audit().ok


def test_the_profile_is_built_from_live_facts_and_held_to_the_schema(memory):
    _, ana = setup(memory)
    before = ana.profile()
    assert before.status == "absent" and before.current_count == 5 and not before.properties
    report = memory.build_profiles()
    assert report["users"] == 1 and report["absent"] == 1 and report["built"] == 1
    assert report["behind"] == ["acme/user/ana"]
    found = ana.profile()
    assert found.status == "current" and not found.stale
    assert found.properties == {"home_city": "Porto", "age": 41, "likes": ["green tea", "jazz"], "vegetarian": True}
    assert found.source_count == found.current_count == 5 and found.sources_digest == found.current_digest
    assert found.text.splitlines() == [
        "Structured profile (derived from 5 facts):",
        "- age: 41",
        "- home_city: Porto",
        "- likes: green tea; jazz",  # newest first; written at one instant: by key, descending
        "- vegetarian: true",
    ]
    assert found.fed_by["home_city"] == [ana.get("home-city").fact_id]
    row = ana.get(PROFILE_KEY)  # a memory row of the user's scope: memory's own reads, history, erasure
    assert row.memory_type == "profile" and row.source_class == "derived"
    assert row.provenance.actor == row.changed_by == PROFILE_ACTOR
    assert row.value["schema_hash"] == found.schema_hash and row.value["source_count"] == 5


def test_a_value_that_is_not_the_propertys_type_is_left_out(memory):
    _, ana = setup(memory)
    ana.set("age", "forty-one")
    memory.build_profiles()
    assert "age" not in ana.profile().properties


def test_a_high_fact_never_feeds_a_profile(memory):
    _, ana = setup(memory)
    ana.set("like-card", "my card is 4111 1111 1111 1111", memory_type="preference")
    memory.build_profiles()
    found = ana.profile()
    assert found.current_count == 5 and not any("4111" in v for v in found.properties["likes"])


def test_a_second_run_over_unchanged_facts_writes_nothing(memory):
    setup(memory)
    memory.build_profiles()
    audits = memory.store.unchecked_sql("SELECT count(*) AS n FROM audit_log")
    again = memory.build_profiles()
    assert again["built"] == 0 and again["current"] == 1 and again["behind"] == []
    assert len(history(memory)) == 1
    assert memory.store.unchecked_sql("SELECT count(*) AS n FROM audit_log") == audits


def _edit(ana, clock):
    ana.set("home-city", "Lisbon")


def _delete(ana, clock):
    ana.delete("like-tea")


def _restore(ana, clock):
    ana.restore("like-tea")


def _expire(ana, clock):
    clock.advance(timedelta(hours=2))  # like-jazz was written with a one-hour ttl


def _ends(ana, clock):
    clock.advance(timedelta(days=3))  # diet:vegetarian stops being valid after two days


CHANGES = {"edit": _edit, "delete": _delete, "expire": _expire, "valid_to": _ends}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_of_a_source_causes_exactly_one_rebuild(memory, clock, change):
    _, ana = setup(memory, jazz_ttl=3600, diet_until=clock.now() + timedelta(days=2))
    assert memory.build_profiles()["built"] == 1
    CHANGES[change](ana, clock)
    stale = ana.profile()
    assert stale.status == "stale" and stale.stale and stale.current_digest != stale.sources_digest
    assert memory.build_profiles(apply=False)["behind"] == ["acme/user/ana"] and len(history(memory)) == 1
    assert memory.build_profiles()["built"] == 1
    assert memory.build_profiles()["built"] == 0
    assert len(history(memory)) == 2 and ana.profile().status == "current"


def test_a_restore_is_a_change_and_brings_the_value_back(memory, clock):
    _, ana = setup(memory)
    memory.build_profiles()
    _delete(ana, clock)
    memory.build_profiles()
    assert ana.profile().properties["likes"] == ["jazz"]
    _restore(ana, clock)
    assert ana.profile().stale
    assert memory.build_profiles()["built"] == 1 and memory.build_profiles()["built"] == 0
    assert ana.profile().properties["likes"] == ["green tea", "jazz"] and len(history(memory)) == 3


def test_what_is_no_change_of_a_source_causes_no_rebuild(indexed_memory):
    memory = indexed_memory
    _, ana = setup(memory)
    memory.build_profiles()
    ana.set("home-city", "Porto")  # the same value again: a restatement
    ana.set("shoe-size", "40")  # a fact no property reads
    assert ana.recall("where does ana live").hits  # a recall
    assert ana.profile().status == "current" and memory.build_profiles()["built"] == 0
    assert len(history(memory)) == 1


def test_a_schema_change_rebuilds_once(memory):
    admin, ana = setup(memory)
    memory.build_profiles()
    admin.profile_schema_set({"home_city": SCHEMA["home_city"]})
    assert ana.profile().status == "stale"
    assert memory.build_profiles()["built"] == 1 and memory.build_profiles()["built"] == 0
    assert ana.profile().properties == {"home_city": "Porto"}


def test_a_users_own_schema_replaces_the_tenants_for_that_user(memory):
    _, ana = setup(memory)
    ana.profile_schema_set({"likes": SCHEMA["likes"]}, scope="user")
    other = memory.for_run(Identity(tenant="acme", user="cy", agent="bob"))
    other.set("home-city", "Braga")
    report = memory.build_profiles()
    assert report["users"] == 2 and report["built"] == 2
    assert ana.profile().properties == {"likes": ["green tea", "jazz"]} and ana.profile().schema_scope == "user"
    assert other.profile().properties == {"home_city": "Braga"} and other.profile().schema_scope == "tenant"


def test_a_row_a_caller_writes_at_the_profile_key_is_no_profile(memory):
    _, ana = setup(memory)
    forged = {"properties": {"home_city": "Atlantis"}, "schema_hash": "x", "sources_digest": "y", "source_count": 1}
    ana.set(PROFILE_KEY, forged, memory_type="profile")
    assert ana.profile().status == "absent"  # not the worker's: neither served nor counted as built
    assert memory.build_profiles()["built"] == 1
    assert ana.profile().properties["home_city"] == "Porto"


def test_nothing_is_built_without_a_schema_or_without_sources(memory):
    ana = memory.for_run(BOB)
    ana.set("home-city", "Porto")
    assert ana.profile().status == "no_schema" and memory.build_profiles()["users"] == 0
    memory.for_run(ADMIN).profile_schema_set({"team": {"type": "string", "from": {"keys": ["team"]}}})
    report = memory.build_profiles()
    assert report["empty"] >= 1 and report["built"] == 0 and ana.get(PROFILE_KEY) is None


def test_the_digest_does_not_depend_on_the_order_of_its_sources(memory):
    _, ana = setup(memory)
    facts = ana.list()
    shuffled = list(facts)
    random.Random(7).shuffle(shuffled)
    assert source_digest(facts) == source_digest(shuffled) != source_digest(facts[1:])


# -- the profile in the context an agent receives ----------------------------------------------------


def profiled(memory):
    """Ana's profile built, and bob wearing a lens that admits lessons and profiles."""
    admin, ana = setup(memory)
    define_lenses(admin)
    admin.lens_define("personal", entity_types=["lesson", "profile"])
    admin.lens_assign("personal", "agent:bob")
    ana.set("deploy", "Deploys are frozen on Friday", memory_type="lesson")
    memory.build_profiles()
    return ana


def test_get_context_packs_the_profile_first_marked_derived(memory):
    ana = profiled(memory)
    found = ana.get_context(lenses=["personal"], token_budget=500)
    section = found.profile
    assert section is not None and section.key == PROFILE_KEY and section.entity_type == "profile"
    assert section.text == ana.profile().text and section.value == ana.profile().properties
    assert section.why["derived"] == "structured_profile" and section.why["stale"] is False
    assert [i.key for i in found.lessons] == ["deploy"]  # not ranked among the lessons too
    assert found.tokens_used == section.tokens + sum(i.tokens for i in found.lessons) <= 500
    assert section.ref in {d.ref for d in found.receipt.disclosed}
    ana.set("home-city", "Lisbon")
    assert ana.get_context(lenses=["personal"], token_budget=500).profile.why["stale"] is True


def test_a_profile_that_does_not_fit_is_left_out_and_the_budget_holds(memory):
    ana = profiled(memory)
    found = ana.get_context(lenses=["personal"], token_budget=12)
    assert found.profile is None and found.tokens_used <= 12


def test_a_lens_that_does_not_admit_profiles_shows_none(memory):
    ana = profiled(memory)
    found = ana.get_context(lenses=["developer"], token_budget=500)
    assert found.profile is None and PROFILE_KEY not in [i.key for i in found.lessons]


def test_render_shows_the_profile_as_its_text_marked_derived(memory):
    ana = profiled(memory)
    view = ana.render(lenses=["personal"])
    shown = next(i for i in view.items if i.key == PROFILE_KEY)
    assert shown.text == ana.profile().text and shown.why["derived"] == "structured_profile"
