"""The index check compares fact ids, not counts: a fact missing from the index, a row of an older
version or other content, a row the store does not serve, a fact held twice. ``repair`` mends
each of them. The damage is done through the index's own table (the test-only route: rows
written or deleted past the projector) or through an index that fails its writes, injected with
``Memory.open(open_index=...)``."""

from __future__ import annotations

import dataclasses

from memory_core import Identity, Memory
from memory_core.adapters.lance.mending import compare
from memory_core.adapters.lance.rows import index_table
from memory_core.model import FactVersion, Status
from memory_core.values import canonical_json
from tests.index_faults import IndexFaults

RUN = Identity(tenant="acme", user="ana", agent="helper")


def put_rows(memory: Memory, states: list[FactVersion]) -> None:
    """Append index rows for ``states`` straight to the table, as a damaged or lagging index would."""
    index = memory.projector.index
    vectors = memory.embedder.embed([s.value_json for s in states])
    index.add(index_table(states, vectors, index.dim))


def test_a_row_deleted_from_the_table_is_missing_by_fact_id_and_repaired(seeded):
    memory, tool = seeded
    pet = tool.get("pet")
    memory.projector.index.delete_facts([pet.fact_id])
    report = memory.projector.consistency()
    assert not report.ok and report.missing == (pet.fact_id,) and report.unrecorded == (pet.fact_id,)
    assert (report.stale, report.extra, report.duplicated, report.pending_repair) == ((), (), (), ())
    assert report.to_dict()["missing_ids"] == [pet.fact_id]
    assert "pet" not in {h.key for h in tool.recall("cat named Miso", recipe="bm25_only").hits}
    assert memory.repair_projections() == 1
    assert memory.projector.consistency().ok
    assert tool.recall("cat named Miso", recipe="bm25_only").hits[0].key == "pet"


def test_a_row_of_other_content_or_an_older_version_is_stale_and_rewritten(seeded):
    memory, tool = seeded
    city, food = tool.get("city"), tool.get("food")
    memory.projector.index.delete_facts([city.fact_id, food.fact_id])
    # city: the same version with other content (a value the store no longer holds);
    # food: an older version of the fact than the store's latest.
    leaked = dataclasses.replace(city, value_json=canonical_json("lives in Porto"))
    older = dataclasses.replace(food, id="an-older-version", version=food.version - 1)
    put_rows(memory, [leaked, older])
    report = memory.projector.consistency()
    assert report.stale == tuple(sorted([city.fact_id, food.fact_id])) and report.missing == ()
    assert memory.repair_projections() == 2
    assert memory.projector.consistency().ok
    assert not tool.recall("Porto", recipe="bm25_only").hits
    rows = {f: (v, value) for f, v, value in memory.projector.index.heads()}
    assert rows[city.fact_id] == (city.id, city.value_json) and rows[food.fact_id][0] == food.id


def test_a_row_the_store_does_not_serve_is_extra_and_forgotten(seeded):
    memory, tool = seeded
    food = tool.get("food")
    tool.delete("food")
    memory.flush()
    put_rows(memory, [food])  # the deleted fact's row comes back (an index write that landed late)
    ghost = dataclasses.replace(food, id="v-ghost", fact_id="f-ghost", key="ghost")  # a fact the store never had
    put_rows(memory, [ghost])
    report = memory.projector.consistency()
    assert report.extra == tuple(sorted([food.fact_id, "f-ghost"])) and report.missing == ()
    # The damage is real: a search trusts the row's status, and serves the deleted fact.
    assert {h.key for h in tool.recall("likes ramen", recipe="bm25_only").hits} == {"food", "ghost"}
    assert memory.repair_projections() == 2
    assert memory.projector.consistency().ok and memory.projector.index.count() == 2
    assert not tool.recall("likes ramen", recipe="bm25_only").hits


def test_a_fact_held_twice_is_duplicated_and_left_with_one_row(seeded):
    memory, tool = seeded
    city = tool.get("city")
    put_rows(memory, [city])
    report = memory.projector.consistency()
    assert report.duplicated == (city.fact_id,) and report.index_rows == 4 and report.stale == ()
    assert memory.repair_projections() == 1
    assert [f for f, _, _ in memory.projector.index.heads()].count(city.fact_id) == 1
    assert memory.projector.consistency().ok


def test_a_failing_index_sink_leaves_facts_missing_recorded_and_repair_writes_them(home, clock):
    """An index whose writes fail (a full disk) injected at open: the writes stand, the check
    names the facts (recorded, so not unexplained), and repair writes them once the disk is back."""
    faults = IndexFaults()
    with Memory.open(home, clock=clock, embedder="hashing", open_index=faults.open_index) as memory:
        tool = memory.for_run(RUN)
        tool.set("seed", "an earlier row so the index table exists")
        memory.flush()
        faults.failing = OSError("no space left on device")
        written = [tool.set(f"k{i}", f"fact number {i} about tides").version.fact_id for i in range(3)]
        found = tool.recall("tides", recipe="bm25_only")  # the read flushes: the write fails, is recorded
        assert not found.hits and any("not in the index yet" in n for n in found.notes)
        report = memory.projector.consistency()
        assert report.missing == tuple(sorted(written)) == report.pending_repair and report.unrecorded == ()
        faults.failing = None
        assert memory.repair_projections() == 3
        report = memory.projector.consistency()
        assert report.ok and report.pending_repair == ()
        assert {h.key for h in tool.recall("tides", recipe="bm25_only").hits} == {"k0", "k1", "k2"}


def test_a_read_only_check_reports_and_a_writable_open_catches_up(home, clock):
    """A write made without an embedder leaves the index behind: a read-only check names it, and
    the next writable open with the embedder catches it up from the watermark."""
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        memory.for_run(RUN).set("k", "indexed")
    with Memory.open(home, clock=clock) as memory:
        later = memory.for_run(RUN).set("k2", "written without the index").version.fact_id
        memory.for_run(RUN).delete("k")
    with Memory.open(home, clock=clock, read_only=True, embedder="hashing") as memory:
        report = memory.projector.consistency()
        k = memory.for_run(RUN).history("k")[0].fact_id
        assert report.missing == (later,) and report.extra == (k,)
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        assert memory.projector.consistency().ok


def test_a_redacted_row_is_not_asked_of_the_index(home, clock):
    """Redaction makes the index forget the rows it scrubbed; a superseded fact (still visible
    as of its past) whose value was redacted is not missing, and a rebuild leaves it out too."""
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        first = tool.set("diagnosis", "a secret diagnosis").version
        tool.set("diagnosis", "a later, public diagnosis")
        assert tool.history("diagnosis")[-1].status is Status.ACTIVE
        tool.redact("diagnosis", first.id)
        report = memory.projector.consistency()
        assert report.ok, report
        memory.reindex()
        assert memory.projector.consistency().ok
        assert first.fact_id not in {f for f, _, _ in memory.projector.index.heads()}


def test_compare_names_each_finding(seeded):
    """The comparison alone, over hand-made rows: one of each finding."""
    memory, tool = seeded
    tool.set("tea", "drinks green tea")
    a, b, c, d = (tool.get(k) for k in ("city", "pet", "food", "tea"))
    rows = [
        (b.fact_id, b.id, "other content"),  # stale
        (c.fact_id, c.id, c.value_json),  # extra: c is not indexable here
        (d.fact_id, d.id, d.value_json),
        (d.fact_id, d.id, d.value_json),  # duplicated
    ]
    report = compare([a, b, c, d], rows, lambda s: s.fact_id != c.fact_id, pending=[a.fact_id])
    assert (report.missing, report.stale, report.extra, report.duplicated) == (
        (a.fact_id,),
        (b.fact_id,),
        (c.fact_id,),
        (d.fact_id,),
    )
    assert report.unrecorded == tuple(sorted([b.fact_id, c.fact_id, d.fact_id])) and not report.ok
    assert (report.facts, report.indexable, report.index_rows) == (4, 3, 4)


def test_rows_found_before_a_compaction_are_completed_by_fact_id_after_it(tmp_path):
    """A search's rows taken after ``optimize`` compacted their fragments away: their row ids
    name nothing now, so each is completed by its fact id (never a take of a vanished fragment,
    which can make Lance panic instead of raising)."""
    from memory_core.adapters.embedders import HashingEmbedder

    with Memory.open(tmp_path / "home", embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="acme", user="ana"))
        for n in range(6):  # one fragment per flush
            tool.set(f"k{n}", f"compaction word{n}")
            memory.flush()
        index = memory.projector.index
        before = index.snapshot()
        vector = HashingEmbedder().embed(["compaction"])[0]
        rows = before.vector_search(vector, "true", 10, ["fact_id", "key"], nprobes=20)
        assert len({r["_rowid"] >> 32 for r in rows}) > 1
        memory.projector.optimize(cleanup_older_than=None)
        assert index.snapshot().version != before.version
        index.hydrate(rows, ["key", "value_json"], read_at=before)
        assert sorted(r["key"] for r in rows) == [f"k{n}" for n in range(6)]
        assert all("value_json" in r and not r.get("_gone") for r in rows)
