"""Categories and links (docs/write-path.md, "Categories and links"): each scope keeps its own
category taxonomy, never another tenant's or user's; a row's categories follow its key, and one
the owner rescinded stays rescinded across an import and an extraction; an operator link is kept
by a supersession and by a delete, live again after the Undo, and gone only by an unlink or the
erasure of its owner; every refusal is typed and leaves the store as it was."""

from __future__ import annotations

import pytest

from memory_core import Identity
from memory_core.errors import InvalidInput, NotFound
from memory_core.write.batch import import_key
from memory_core.write.categories import CategoryNotFound
from tests.conftest import store_snapshot

pytestmark = pytest.mark.faces  # the behaviour suite: in-process, through the service, over PostgreSQL

ANA = Identity(tenant="acme", user="ana", agent="helper", session="s1")
BEA = Identity(tenant="acme", user="bea", agent="helper", session="s1")
OTHER_ANA = Identity(tenant="globex", user="ana", agent="helper", session="s1")  # same names, another tenant


def names(categories) -> list[str]:
    return [c.name for c in categories]


def rows(memory, table: str) -> int:
    return memory.store.unchecked_sql(f"SELECT count(*) AS n FROM {table}")[0]["n"]


def test_each_scope_keeps_its_own_taxonomy(memory):
    ana, bea, other = memory.for_run(ANA), memory.for_run(BEA), memory.for_run(OTHER_ANA)
    family = ana.category_define("family", description="relatives: sister, brother")
    assert (family.name, family.version, family.description) == ("family", 1, "relatives: sister, brother")
    ana.category_define("work", scope="agent")
    assert names(ana.categories()) == ["family"] and names(ana.categories(scope="agent")) == ["work"]
    assert bea.categories() == [] and other.categories() == []  # another user's, another tenant's
    assert names(bea.categories(scope="agent")) == ["work"]  # the same agent's scope: the same taxonomy
    # The same definition again writes nothing; a new description is the next version.
    assert ana.category_define("family", description="relatives: sister, brother") == family
    assert rows(memory, "categories") == 2
    changed = ana.category_define("family", description="kin")
    assert (changed.version, names(ana.categories()), ana.categories()[0].description) == (2, ["family"], "kin")


def test_a_category_of_another_users_taxonomy_is_not_found(memory):
    ana, bea = memory.for_run(ANA), memory.for_run(BEA)
    bea.category_define("family")
    ana.set("sister", "Maya")
    before = store_snapshot(memory)
    with pytest.raises(CategoryNotFound) as refused:
        ana.assign_category("sister", "family")
    assert refused.value.code == "CATEGORY_NOT_FOUND" and refused.value.status == 404
    assert store_snapshot(memory) == before


def test_assign_then_rescind_and_a_rescinded_pair_stays_rescinded_across_imports(memory):
    ana = memory.for_run(ANA)
    ana.category_define("hobby")
    ana.category_define("sport")
    chess = import_key("I play chess on Sundays")
    ana.import_items([{"text": "I play chess on Sundays", "categories": ["hobby"]}])
    assert names(ana.categories(key=chess)) == ["hobby"]  # the import carried it
    rescinded = ana.assign_category(chess, "hobby", rescind=True)
    assert (rescinded.state, rescinded.version, rescinded.origin) == ("rescinded", 2, "assign")
    assert ana.categories(key=chess) == []
    # The same import again, and one naming a new pair too: only the pair never stored is added.
    ana.import_items([{"text": "I play chess on Sundays", "categories": ["hobby"]}])
    assert ana.categories(key=chess) == []
    ana.import_items([{"text": "I play chess on Sundays", "categories": ["hobby", "sport"]}])
    assert names(ana.categories(key=chess)) == ["sport"]
    # The owner may assign it again; the same call twice writes nothing.
    again = ana.assign_category(chess, "hobby")
    assert (again.state, again.version) == ("assigned", 3)
    assert ana.assign_category(chess, "hobby") == again
    assert names(ana.categories(key=chess)) == ["hobby", "sport"]


def test_a_rows_categories_follow_its_key_through_a_revision_and_an_undo(memory):
    ana = memory.for_run(ANA)
    ana.category_define("home")
    ana.set("city", "Lisbon")
    ana.assign_category("city", "home")
    ana.set("city", "Porto")  # a new statement: the key's row carries the category still
    assert names(ana.categories(key="city")) == ["home"]
    ana.delete("city")
    assert ana.categories(key="city") == []  # no live row: it carries nothing now
    ana.restore("city")
    assert names(ana.categories(key="city")) == ["home"]


def test_an_import_naming_an_unknown_category_is_refused_whole(memory):
    ana = memory.for_run(ANA)
    ana.category_define("hobby")
    before = store_snapshot(memory)
    with pytest.raises(CategoryNotFound):
        ana.import_items(["plain text", {"text": "I play chess", "categories": ["hobby", "nope"]}])
    with pytest.raises(InvalidInput):
        ana.import_items([{"text": "I play chess", "categories": "hobby"}])  # a list, not a name
    with pytest.raises(InvalidInput):
        ana.import_items([{"text": "I play chess", "categories": ["Hobby"]}])
    assert store_snapshot(memory) == before
    dry = ana.import_items([{"text": "I play chess", "categories": ["hobby"]}], dry_run=True)
    assert dry.dry_run and store_snapshot(memory) == before


REFUSALS = [
    ("unknown category", NotFound, lambda t: t.assign_category("sister", "nope")),
    ("missing key", NotFound, lambda t: t.assign_category("no-such-key", "family")),
    ("key of another scope", NotFound, lambda t: t.assign_category("sister", "family", scope="agent")),
    ("rescind never assigned", NotFound, lambda t: t.assign_category("trip", "family", rescind=True)),
    ("bad category name", InvalidInput, lambda t: t.category_define("Family")),
    ("blank category name", InvalidInput, lambda t: t.category_define(" ")),
    ("long description", InvalidInput, lambda t: t.category_define("x", description="d" * 501)),
    ("link to itself", InvalidInput, lambda t: t.link("sister", "sister")),
    ("link to a missing key", NotFound, lambda t: t.link("sister", "no-such-key")),
    ("link across scopes", NotFound, lambda t: t.link("sister", "trip", scope="agent")),
    ("bad relation", InvalidInput, lambda t: t.link("sister", "trip", relation="goes with")),
    ("unlink what is not linked", NotFound, lambda t: t.link("sister", "trip", unlink=True)),
]


@pytest.mark.parametrize("why, error, call", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_a_refusal_is_typed_and_leaves_the_store_as_it_was(memory, why, error, call):
    ana = memory.for_run(ANA)
    ana.category_define("family")
    ana.set("sister", "Maya")
    ana.set("trip", "Lisbon in May")
    before = store_snapshot(memory)
    with pytest.raises(error):
        call(ana)
    assert store_snapshot(memory) == before


def test_another_tenants_row_answers_as_missing(memory):
    ana, other = memory.for_run(ANA), memory.for_run(OTHER_ANA)
    ana.set("sister", "Maya")
    ana.set("trip", "Lisbon")
    ana.link("sister", "trip")
    other.category_define("family")
    before = store_snapshot(memory)
    for call in (
        lambda: other.assign_category("sister", "family"),
        lambda: other.link("sister", "trip"),
        lambda: other.link("sister", "trip", unlink=True),
    ):
        with pytest.raises(NotFound):
            call()
    assert other.links("sister") == [] and other.categories(key="sister") == []
    assert store_snapshot(memory) == before


def test_a_link_is_kept_by_a_supersession_and_a_delete_and_is_live_again_after_the_undo(memory):
    ana = memory.for_run(ANA)
    ana.set("sister", "Maya")
    ana.set("trip", "Lisbon in May")
    made = ana.link("trip", "sister", relation="with")
    assert [(e.key, e.other_key, e.relation, e.state, e.live, e.other_live) for e in made] == [
        ("trip", "sister", "with", "linked", True, True)
    ]
    assert ana.link("trip", "sister", relation="with") == made  # the same link again writes nothing
    assert ana.links("sister") == ana.links("trip") == made  # either end reads it

    ana.delete("sister")
    (edge,) = ana.links("trip")
    assert (edge.live, edge.other_live) == (True, False)  # kept, its retired end shown
    ana.restore("sister")
    assert ana.links("trip") == made  # the Undo makes it live again, the same edge

    ana.update("sister", "Maya Silva")  # a revision keeps the fact, and so the edge live
    assert [(e.fact_id, e.live, e.other_live) for e in ana.links("trip")] == [(made[0].fact_id, True, True)]
    ana.set("trip", "Lisbon in June")  # a new statement retires the linked fact
    (edge,) = ana.links("trip")
    assert (edge.fact_id, edge.live, edge.other_live) == (made[0].fact_id, False, True)

    ana.set("hotel", "Casa Azul")
    (kept,) = ana.link("trip", "hotel", relation="with")
    (gone,) = ana.link("sister", "trip", relation="with", unlink=True)  # either order; that pair only
    assert gone.state == "unlinked" and ana.links("sister") == [] and ana.links("trip") == [kept]
    (again,) = ana.link("trip", "hotel", relation="with", unlink=True)
    (back,) = ana.link("trip", "hotel", relation="with")  # linked again: the edge's next version
    assert (again.state, back.state, back.version, ana.links("hotel")) == ("unlinked", "linked", 3, [back])


def test_an_erasure_of_the_user_takes_their_taxonomy_links_and_edges(memory):
    ana, bea = memory.for_run(ANA), memory.for_run(BEA)
    for tool in (ana, bea):
        tool.category_define("zebrafamily")
        tool.set("sister", "Maya")
        tool.set("trip", "Lisbon")
        tool.assign_category("sister", "zebrafamily")
        tool.link("sister", "trip")
    request = memory.erase("acme", user="ana")
    assert request.status.value == "verified" and request.residue_count == 0, request.error
    for table in ("categories", "category_links", "memory_links"):
        left = memory.store.unchecked_sql(f"SELECT DISTINCT owner_id FROM {table}")
        assert left == [{"owner_id": "bea"}], table
    assert ana.categories() == [] and ana.links("sister") == []
    assert names(bea.categories(key="sister")) == ["zebrafamily"] and len(bea.links("sister")) == 1
    assert memory.verify_audit().ok


def test_extraction_loads_the_taxonomy_and_keeps_a_rescinded_pair_rescinded(memory):
    ana = memory.for_run(ANA)
    ana.category_define("family", description="relatives: sister, brother, mother")
    ana.category_define("home", description="where someone lives")
    messages = [{"role": "user", "content": "My sister is called Maya. I live in Lisbon."}]
    dry = ana.set_from_messages(messages, dry_run=True)
    assert "fetch_namespace_categories" in dry.steps
    assert rows(memory, "category_links") == 0  # a dry run assigns nothing
    done = ana.set_from_messages(messages)
    assert set(done.written) == {"user:sister_name", "user:lives_in"}
    assert names(ana.categories(key="user:sister_name")) == ["family"]
    assert names(ana.categories(key="user:lives_in")) == ["home"]
    ana.assign_category("user:lives_in", "home", rescind=True)
    ana.set_from_messages([{"role": "user", "content": "I live in Porto now."}], session="s2")
    assert ana.get("user:lives_in").value.endswith("Porto")
    assert ana.categories(key="user:lives_in") == []  # the owner's rescind stands


def test_without_the_step_nothing_is_categorized(memory):
    ana = memory.for_run(ANA)
    ana.category_define("family", description="sister")
    steps = ["llm_extract", "bulk_write"]
    ana.set_from_messages([{"role": "user", "content": "My sister is called Maya."}], steps=steps)
    assert ana.get("user:sister_name") is not None and ana.categories(key="user:sister_name") == []
