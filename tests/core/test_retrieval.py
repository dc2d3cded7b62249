"""recall / search through the real DuckDB store and the real Lance index (hashing embedder)."""

import json
from datetime import timedelta

import numpy as np
import pytest

from memory_core import Identity, Memory
from memory_core.adapters.embedders import HashingEmbedder
from memory_core.errors import (
    EmbedderMismatch,
    EmbedderUnavailable,
    InvalidInput,
    MalformedTimestamp,
    ScopeForbidden,
    UnknownKind,
)
from memory_core.retrieval.fusion import rrf
from tests.conftest import T0, store_snapshot, utc

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service

MAR, APR, MAY, JUL = utc(2024, 3, 1), utc(2024, 4, 15), utc(2024, 5, 1), utc(2024, 7, 1)


@pytest.fixture
def imemory(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as m:
        yield m


def tool_of(memory, tenant="acme", user="ana", agent="helper", **kw):
    return memory.for_run(Identity(tenant=tenant, user=user, agent=agent, **kw))


def keys(result):
    return [h.key for h in result.hits]


def test_empty_store_answers_no_match(imemory):
    result = tool_of(imemory).recall("what medication do I take")
    assert result.verdict == "no_match" and result.abstain and result.hits == ()


def test_read_your_writes(imemory):
    tool = tool_of(imemory)
    tool.set("pet", "a grey cat called Miso")
    assert keys(tool.recall("cat called Miso")) == ["pet"]
    tool.set("pet", "a golden retriever called Biscuit")
    hits = tool.recall("golden retriever Biscuit").hits
    assert hits[0].value == "a golden retriever called Biscuit"


def test_superseded_in_may_is_returned_for_april_not_july(imemory, clock):
    tool = tool_of(imemory)
    tool.set("medication", "ibuprofen for back pain", valid_at=MAR)
    clock.advance()
    tool.set("medication", "paracetamol for headaches", valid_at=MAY)
    april = tool.recall("medication ibuprofen paracetamol", as_of=APR)
    assert [h.value for h in april.hits] == ["ibuprofen for back pain"]
    assert april.hits[0].invalid_at == MAY and april.hits[0].status == "superseded"
    july = tool.recall("medication ibuprofen paracetamol", as_of=JUL)
    assert [h.value for h in july.hits] == ["paracetamol for headaches"]


def test_future_invalid_at_is_returned_today_and_not_after(imemory, clock):
    tool = tool_of(imemory)
    tool.set("contract", "phone plan with Telco", invalid_at=T0 + timedelta(days=200))
    assert keys(tool.recall("phone plan contract")) == ["contract"]
    assert tool.recall("phone plan contract", as_of=T0 + timedelta(days=201)).verdict == "no_match"


def test_deleted_rows_are_not_returned_and_restore_brings_them_back(imemory):
    tool = tool_of(imemory)
    tool.set("hobby", "plays the cello on Sundays")
    tool.delete("hobby")
    assert tool.recall("cello").verdict == "no_match"
    tool.restore("hobby")
    assert keys(tool.recall("cello")) == ["hobby"]


def test_rows_of_another_scope_user_or_tenant_are_never_returned(imemory):
    secret = "the vault code is swordfish"
    writers = [tool_of(imemory, user="bob"), tool_of(imemory, tenant="globex"), tool_of(imemory, agent="other")]
    writers[0].set("vault", secret)  # another user, same tenant
    writers[1].set("vault", secret)  # same user id, another tenant
    writers[2].set("vault", secret, scope="agent")  # another agent's scope
    tool_of(imemory).set("vault", secret, scope="tenant")  # this tenant's shared scope
    reader = tool_of(imemory)
    assert reader.recall("vault code swordfish", scope="user").verdict == "no_match"
    assert reader.recall("vault code swordfish", scope="agent").verdict == "no_match"
    tenant_hits = reader.recall("vault code swordfish", scope="tenant").hits
    assert [(h.key, h.provenance["tenant"]) for h in tenant_hits] == [("vault", "acme")]
    assert tool_of(imemory, tenant="initech").recall("swordfish", scope="tenant").verdict == "no_match"


def test_one_read_one_scope_and_global_is_admin_only(imemory):
    tool_of(imemory).set("motto", "measure twice", scope="tenant")
    with pytest.raises(ScopeForbidden):
        tool_of(imemory).recall("motto", scope="global")
    admin = tool_of(imemory, admin=True)
    admin.set("motto", "cut once", scope="global")
    assert [h.value for h in admin.recall("motto", scope="global").hits] == ["cut once"]


def test_weak_matches_abstain_below_threshold(imemory):
    tool = tool_of(imemory)
    tool.set("colour", "favourite colour is blue")
    result = tool.recall("quantum chromodynamics on a lattice")
    assert result.verdict == "below_threshold" and result.abstain


def test_a_named_identifier_missing_from_every_hit_abstains(imemory):
    tool = tool_of(imemory)
    tool.set("ticket", "incident INC-4821 was about the login page")
    assert tool.recall("what happened in INC-4821").verdict == "ok"
    assert tool.recall("what happened in INC-9999 login page").verdict == "identifier_absent"


def test_sources_selector(imemory):
    tool = tool_of(imemory)
    tool.set("fact-key", "the train leaves at nine", kind="fact")
    tool.set("note-key", "the train was late again", kind="note")
    only_notes = tool.recall("train", sources=["note"])
    assert keys(only_notes) == ["note-key"] and only_notes.sources_applied
    assert set(keys(tool.recall("train"))) == {"fact-key", "note-key"}
    tool.doc_put("timetable", "# Timetable\n\nThe train to Porto leaves at nine.\n")
    widened = tool.search("train")  # every plane, documents included
    assert widened.sources_applied is True and "doc:timetable#0000" in keys(widened)
    assert keys(tool.search("train", sources=["document"])) == ["doc:timetable#0000"]
    assert "doc:timetable#0000" not in keys(tool.recall("train"))


def test_recipes_run_only_their_legs_and_hits_explain_themselves(imemory):
    tool = tool_of(imemory)
    for i, text in enumerate(["sailing on the lake", "lake house in summer", "skiing in winter"]):
        tool.set(f"memory-{i}", text)
    for recipe, legs in (("vector_only", {"vector"}), ("bm25_only", {"bm25"}), ("hybrid_rrf", {"vector", "bm25"})):
        result = tool.recall("lake", recipe=recipe)
        assert set(result.recipe["legs"]) == legs
        assert all(set(h.legs) <= legs for h in result.hits)
    hit = tool.recall("lake house").hits[0]
    assert hit.key == "memory-1" and hit.legs["bm25"].rank == 1 and hit.score > 0
    assert hit.provenance["tenant"] == "acme" and hit.kind.value == "fact"


def test_k_and_token_budget(imemory):
    tool = tool_of(imemory)
    for i in range(8):
        tool.set(f"walk-{i}", f"walk number {i} along the river " + "x" * 40)
    assert len(tool.recall("walk river", k=3).hits) == 3
    budgeted = tool.recall("walk river", k=8, token_budget=30)
    assert len(budgeted.hits) < 8 and budgeted.truncated == 8 - len(budgeted.hits)


@pytest.mark.parametrize(
    "kwargs,error",
    [
        ({"query": ""}, InvalidInput),
        ({"query": "   "}, InvalidInput),
        ({"query": "x", "k": 0}, InvalidInput),
        ({"query": "x", "k": -3}, InvalidInput),
        ({"query": "x", "recipe": "magic"}, InvalidInput),
        ({"query": "x", "sources": ["rumour"]}, UnknownKind),
        ({"query": "x", "as_of": "soon"}, MalformedTimestamp),
        ({"query": "x", "scope": "global"}, ScopeForbidden),
    ],
)
def test_bad_search_input_is_a_typed_error(imemory, kwargs, error):
    with pytest.raises(error):
        tool_of(imemory).recall(**kwargs)


class FlakyEmbedder(HashingEmbedder):
    """A real embedder that can be told to fail, as an unreachable embedding server would."""

    failing = False

    def embed(self, texts):
        if self.failing:
            raise ConnectionError("embedding server unreachable")
        return super().embed(texts)


def test_an_embedder_failure_fails_the_write_and_writes_nothing(home, clock):
    embedder = FlakyEmbedder()
    memory = Memory.open(home, clock=clock, embedder=embedder)
    tool = tool_of(memory)
    before = memory.store.inspection.table_counts()
    embedder.failing = True
    with pytest.raises(EmbedderUnavailable):
        tool.set("allergy", "allergic to peanuts")
    assert memory.store.inspection.table_counts() == before and tool.get("allergy") is None
    memory.close()


def test_a_failed_index_write_never_fails_the_write_and_is_repaired(home, clock, monkeypatch):
    memory = Memory.open(home, clock=clock, embedder=HashingEmbedder())
    tool = tool_of(memory)
    tool.set("seed", "an earlier row so the index table exists")
    memory.flush()

    def disk_full(rows):
        raise OSError("no space left on device")

    monkeypatch.setattr(memory.projector.index, "add", disk_full)
    result = tool.set("allergy", "allergic to peanuts")
    assert result.verdict == "created" and tool.get("allergy").value == "allergic to peanuts"
    found = tool.recall("peanuts")  # the read flushes the queue; the index write fails and is recorded
    assert memory.store.projections.pending_projection_failures() == [result.version.fact_id]
    assert "allergy" not in keys(found) and any("not in the index yet" in n for n in found.notes)
    monkeypatch.undo()
    assert memory.repair_projections() == 1
    assert keys(tool.recall("peanuts"))[0] == "allergy"
    assert memory.store.projections.pending_projection_failures() == []
    memory.close()


def test_an_index_built_with_another_embedder_is_refused(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as m:
        tool_of(m).set("k", "some text")
    with Memory.open(home, clock=clock, embedder=HashingEmbedder(dim=128)) as m:
        before = store_snapshot(m)
        with pytest.raises(EmbedderMismatch):  # refused before anything is written
            tool_of(m).set("other", "a write the index cannot take")
        assert store_snapshot(m) == before
        with pytest.raises(EmbedderMismatch):
            tool_of(m).recall("text")


def test_reindex_rebuilds_the_index_from_the_store(home, clock):
    with Memory.open(home, clock=clock) as m:  # no embedder: no index is kept
        tool_of(m).set("garden", "tomatoes and basil on the balcony")
    with Memory.open(home, clock=clock, embedder="hashing") as m:
        # Rows written without an embedder are projected the first time the index is needed.
        assert keys(tool_of(m).recall("basil")) == ["garden"]
        assert m.reindex() == 1
        assert keys(tool_of(m).recall("basil")) == ["garden"]


def test_rrf_is_pure_and_breaks_ties_by_id():
    fused = rrf({"a": ["x", "y"], "b": ["y", "x"]}, {"a": 1.0, "b": 1.0}, k=60)
    assert [i for i, _ in fused] == ["x", "y"]  # equal scores: id order
    weighted = rrf({"a": ["x", "y"], "b": ["y", "x"]}, {"a": 1.0, "b": 2.0}, k=60)
    assert weighted[0][0] == "y"
    assert np.isclose(weighted[0][1], 1 / 62 + 2 / 61)


@pytest.mark.parametrize("history, fetches", [(120, [50, 200]), (260, [50, 200, "full"])])
def test_a_leg_short_of_live_rows_fetches_wider_then_under_the_full_filter(imemory, monkeypatch, history, fetches):
    """Legs fetch their pool under the scope filter and check time themselves; when history
    crowds out the live rows, a wider fetch, then the full filter, must still find them."""
    from memory_core.adapters.lance.read import IndexSnapshot

    tool = tool_of(imemory)
    for i in range(history):  # matching rows, all closed long before now
        tool.set(f"old-{i}", f"river walk, river walk {i}", valid_at=utc(2020, 1, 1), invalid_at=utc(2020, 2, 1))
    # Long and with each word once, the live row ranks below every old one.
    tool.set("live", "a river walk today with friends along the long quiet bank of the wide slow water")
    seen = []
    original = IndexSnapshot.fts_search
    monkeypatch.setattr(
        IndexSnapshot,
        "fts_search",
        lambda self, text, where, limit, columns: (
            seen.append("full" if "valid_at <=" in where else limit) or original(self, text, where, limit, columns)
        ),
    )
    result = tool.recall("river walk", recipe="bm25_only", k=5)
    assert [h.key for h in result.hits] == ["live"] and seen == fetches
    assert len(tool.recall("river walk", recipe="bm25_only", k=5, as_of=utc(2020, 1, 15)).hits) == 5


def test_index_rows_of_a_hidden_status_are_never_answered_nor_crowd_out_the_visible(imemory):
    """The index holds visible facts only, so the legs' prefilter leaves status out and checks it
    on the rows: rows a lagging or damaged index still shows as rejected must neither be answered
    nor fill a leg's pool in place of the visible ones."""
    tool = tool_of(imemory)
    for i in range(70):
        tool.set(f"gone-{i}", f"river walk, river walk {i}")
    tool.set("kept", "a river walk today with friends along the long quiet bank of the wide slow water")
    imemory.projector.flush()
    imemory.projector.index.table.update(where="key LIKE 'gone-%'", values={"status": "rejected"})
    for recipe in ("bm25_only", "vector_only", "hybrid_rrf"):
        assert keys(tool.recall("river walk", recipe=recipe, k=5)) == ["kept"], recipe


def test_a_process_never_replays_its_own_queued_writes(home, clock, monkeypatch):
    with Memory.open(home, clock=clock, embedder=HashingEmbedder()) as memory:
        tool = tool_of(memory)
        replayed = []
        original = memory.store.versions.latest_states
        monkeypatch.setattr(
            memory.store.versions, "latest_states", lambda ids=None: replayed.append(ids) or original(ids)
        )
        tool.bulk_set([{"key": f"k{i}", "value": f"value {i}"} for i in range(20)])
        assert keys(tool.recall("value 3"))  # the first flush: nothing is behind, nothing re-read
        assert replayed == []


def test_light_leg_rows_are_completed_even_after_the_index_was_compacted(imemory):
    from memory_core.retrieval.rows import LEG_COLUMNS

    """Legs read only the filter columns; the answered hits are completed by row id, and by fact
    id when a compaction moved the rows in between. A fact deleted in between is marked gone."""
    tool = tool_of(imemory)
    for i in range(12):
        tool.set(f"city{i}", f"visited city number {i} in spring")
    index = imemory.projector.index
    imemory.projector.flush()
    vector = imemory.embedder.embed(["visited city in spring"])[0]
    rows = index.vector_search(vector, "TRUE", 12, columns=LEG_COLUMNS)
    assert len(rows) == 12 and all("value_json" not in r and "_rowid" in r for r in rows)
    gone = {r["fact_id"] for r in rows[:4]}
    index.delete_facts(sorted(gone))
    index.optimize()  # compaction: the row ids of the rest move
    index.hydrate(rows)
    stored = {s.fact_id: s for s in imemory.store.versions.latest_states()}
    for row in rows:
        if row["fact_id"] in gone:
            assert row.get("_gone")
        else:
            assert row["value_json"] == stored[row["fact_id"]].value_json and row["key"] == stored[row["fact_id"]].key


def test_an_identifier_query_still_searches_every_candidate_for_the_identifier(imemory):
    tool = tool_of(imemory)
    tool.set("order", "order AB-1234 shipped on Monday")
    tool.set("note", "the parcel shipped on Monday")
    assert tool.recall("when did order AB-1234 ship", k=1).verdict == "ok"
    assert tool.recall("when did order ZZ-9999 ship", k=1).verdict == "identifier_absent"


def _manifest_format(home) -> bytes:
    import glob

    newest = sorted(glob.glob(str(home / "lance" / "memory_index.lance" / "_versions" / "*.manifest")))[-1]
    manifest = open(newest, "rb").read()
    return next(v for v in (b"2.0", b"2.1", b"2.2") if v in manifest)


def test_a_rebuild_writes_the_index_in_the_current_file_format(home, clock):
    import lancedb

    from memory_core.adapters.lance.index import TABLE
    from memory_core.adapters.lance.rows import schema

    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool_of(memory).set("pet", "a grey cat called Miso")
        memory.projector.flush()
        data = memory.projector.index.table.to_arrow()
    db = lancedb.connect(str(home / "lance"))  # an index made by an older build: Lance's default format
    db.drop_table(TABLE)
    db.create_table(TABLE, data, schema=schema(data.schema.field("vector").type.list_size))
    meta = home / "lance" / "memory_index.meta.json"
    meta.write_text(json.dumps({k: v for k, v in json.loads(meta.read_text()).items() if k != "file_format"}))
    old = _manifest_format(home)
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        memory.reindex()
        assert keys(tool_of(memory).recall("grey cat")) == ["pet"]
    assert old != b"2.0" and _manifest_format(home) == b"2.0"
    versions = len(list((home / "lance" / "memory_index.lance" / "_versions").glob("*.manifest")))
    with Memory.open(home, clock=clock, embedder="hashing") as memory:  # now overwritten in place: no drop
        memory.reindex()
        assert keys(tool_of(memory).recall("grey cat")) == ["pet"]
    assert _manifest_format(home) == b"2.0"
    assert len(list((home / "lance" / "memory_index.lance" / "_versions").glob("*.manifest"))) > versions


def test_a_rebuild_stopped_after_dropping_the_table_is_caught_up_at_the_next_open(home, clock, monkeypatch):
    from memory_core.adapters.lance import LanceIndex

    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool_of(memory).set("pet", "a grey cat called Miso")
        tool_of(memory).set("car", "a red bicycle, not a car")
        memory.projector.flush()

        def stopped(self, data):
            self._db.drop_table("memory_index")
            self._table = None
            raise OSError("disk went away")

        monkeypatch.setattr(LanceIndex, "replace_all", stopped)
        with pytest.raises(OSError):
            memory.reindex()
    monkeypatch.undo()
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        assert keys(tool_of(memory).recall("grey cat", k=1)) == ["pet"]
        assert keys(tool_of(memory).recall("red bicycle", k=1)) == ["car"]
