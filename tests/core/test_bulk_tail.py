"""A batch's fresh tail (new keys past the peer-check cap, kept as columns) lands exactly as the
row-object path would write it: the same stored rows, the same cache, the same index rows."""

from __future__ import annotations

import threading
from datetime import timedelta

import numpy as np
import pytest

from memory_core import Identity, Memory
from memory_core.adapters.lance.rows import index_table
from memory_core.identity import Scope
from tests.conftest import T0

RUN = Identity(tenant="acme", user="ana", agent="helper", session="s1", run="r1", admin=True)
ENTRIES = [
    {"key": "judged", "value": "the first fact of the batch is the one the capped peer check judges"},
    {"key": "plain", "value": "prefers dark mode"},
    {"key": "noted", "value": {"title": "Trip", "days": [1, 2]}, "kind": "note"},
    {"key": "ttl", "value": "parking permit", "ttl_seconds": 3600, "on_expire": "demote"},
    {"key": "pinned", "value": "blood type O", "pin": True, "confidence": 0.7},
    {"key": "proposal", "value": "may move to Porto", "proposed": True},
    {"key": "secret", "value": "card 4111 1111 1111 1111"},  # high: stored, never embedded or indexed
    {
        "key": "quoted",
        "value": "moved to Lisbon",
        "subject": "Ana",
        "context": "moving",
        "source_quote": "I moved to Lisbon",
        "source_turn": "D1:3",
        "source_span": [2, 17],
    },
    {
        "key": "dated",
        "value": "lived in Oslo",
        "valid_at": (T0 - timedelta(days=400)).isoformat(),
        "invalid_at": (T0 - timedelta(days=30)).isoformat(),
        "observed_at": (T0 - timedelta(days=2)).isoformat(),
    },
    {"key": "derived", "value": "likes green tea", "source_class": "derived", "sensitivity": "low"},
    {"key": "repeated", "value": "first spelling"},
    {"key": "repeated", "value": "second spelling"},  # named twice: kept as row objects, not in the tail
    *({"key": f"city{i}", "value": f"visited city number {i} in spring"} for i in range(40)),
]


@pytest.fixture
def landed(tmp_path, clock):
    home = tmp_path / "home"
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        tool.configure(bulk_check_cap=1)
        result = tool.bulk_set(ENTRIES)
        yield memory, tool, result, home


def test_the_tail_stores_the_rows_the_answer_holds(landed):
    memory, tool, result, _ = landed
    ns = RUN.namespace(Scope.USER)
    assert result.peer_checked == 1 and len(result.verdicts) == len({e["key"] for e in ENTRIES})
    by_key: dict[str, list] = {}
    for row in result.written:
        by_key.setdefault(row.key, []).append(row)
    for key, rows in by_key.items():
        assert memory.store.versions.history(ns, key) == rows  # read back from DuckDB, field for field
    assert memory.verify_audit().ok
    assert [a.entry.version_ids.split(" ")[0] for a in memory.store.versions.audit_rows()[-1:]] == [
        str(len(result.written))
    ]


def test_the_cache_answers_what_the_store_answers_after_a_reopen(landed, clock):
    memory, tool, result, home = landed
    keys = sorted({e["key"] for e in ENTRIES})
    cached = {k: tool.get(k) for k in keys}
    listed = tool.list()
    memory.close()
    with Memory.open(home, clock=clock, embedder="hashing") as reopened:
        again = reopened.for_run(RUN)
        assert {k: again.get(k) for k in keys} == cached
        assert again.list() == listed
    assert cached["secret"].sensitivity == "high" and cached["proposal"].status.value == "proposed"
    assert cached["dated"] is None  # closed a month ago: not live today


def test_the_tail_s_index_rows_are_the_rows_projection_makes(landed):
    memory, tool, result, _ = landed
    report = memory.projector.consistency()
    assert report.ok, report
    latest = {}
    for row in result.written:  # the index holds each fact's latest state
        if row.fact_id not in latest or latest[row.fact_id].version < row.version:
            latest[row.fact_id] = row
    served = [r for r in latest.values() if memory.indexable(r)]
    assert "secret" not in {r.key for r in served} and "noted" in {r.key for r in served}
    stored = memory.projector.index.table.to_arrow().drop_columns(["vector"]).to_pylist()
    expected = index_table(served, np.zeros((len(served), memory.embedder.dim)), memory.embedder.dim)
    expected = expected.drop_columns(["vector"]).to_pylist()
    assert sorted(stored, key=lambda r: r["fact_id"]) == sorted(expected, key=lambda r: r["fact_id"])
    # ... and their vectors are the embedder's for the row's index text (read your writes):
    assert [h.key for h in tool.recall("visited city number 17 in spring", k=1).hits] == ["city17"]
    assert [h.key for h in tool.search("moved to Lisbon", k=1).hits] == ["quoted"]


def test_a_later_write_sees_the_tail_s_keys(landed):
    memory, tool, result, _ = landed
    again = tool.set("city3", "visited city number 3 in spring")
    assert again.verdict == "restated"
    changed = tool.set("city4", "visited city number 4 in autumn")
    assert changed.verdict == "superseded" and tool.get("city4").value == "visited city number 4 in autumn"
    tool.set("plain", "prefers light mode")  # a tail key and the judged (row-object) key change alike
    tool.set("judged", "the judged fact, changed")
    shape = lambda key: [(r.version, r.status.value, r.op.value) for r in tool.history(key)]  # noqa: E731
    assert shape("plain") == shape("judged") == shape("city4")
    assert tool.bulk_set([{"key": "city5", "value": "visited city number 5 in spring"}]).skipped_unchanged == ("city5",)


def test_a_failed_tail_index_write_keeps_the_rows_and_is_repaired(tmp_path, clock, monkeypatch):
    with Memory.open(tmp_path / "home", clock=clock, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        tool.configure(bulk_check_cap=1)
        tool.set("seed", "an earlier row so the index table exists")
        memory.flush()

        def disk_full(rows):
            raise OSError("no space left on device")

        monkeypatch.setattr(memory.projector.index, "add", disk_full)
        result = tool.bulk_set([{"key": f"city{i}", "value": f"visited city number {i} in spring"} for i in range(30)])
        assert len(result.written) == 30 and tool.get("city20").value == "visited city number 20 in spring"
        failed = set(memory.store.projections.pending_projection_failures())
        assert {r.fact_id for r in result.written if r.key != "city0"} <= failed  # city0 was judged: row path
        monkeypatch.undo()
        assert memory.repair_projections() == len(failed)
        assert [h.key for h in tool.recall("visited city number 20 in spring", k=1).hits] == ["city20"]
        report = memory.projector.consistency()
        assert report.ok, report


def test_batches_and_point_writes_from_several_threads_leave_store_cache_and_index_agreeing(tmp_path, clock):
    """The batch's worker threads (embedding, index write) and the store lock under concurrency:
    every key lands once, the cache answers what a reopened store answers, the index agrees."""
    with Memory.open(tmp_path / "home", clock=clock, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        tool.configure(bulk_check_cap=3)
        failures: list[BaseException] = []

        def batches(n: int) -> None:
            try:
                for b in range(3):
                    tool.bulk_set(
                        [{"key": f"b{n}-{b}-{i}", "value": f"value {n} {b} {i} of a batch"} for i in range(120)]
                    )
            except BaseException as exc:  # noqa: BLE001 - reported below
                failures.append(exc)

        def points() -> None:
            try:
                for i in range(60):
                    tool.set(f"p{i % 20}", f"point value number {i}")
                    tool.recall(f"value {i % 2} 1 {i}")
            except BaseException as exc:  # noqa: BLE001 - reported below
                failures.append(exc)

        threads = [threading.Thread(target=batches, args=(n,)) for n in range(2)] + [threading.Thread(target=points)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        listed = tool.list()
        assert len(listed) == 2 * 3 * 120 + 20 and memory.verify_audit().ok
        memory.flush()
        report = memory.projector.consistency()
        assert report.ok, report
    with Memory.open(tmp_path / "home", clock=clock, embedder="hashing") as reopened:
        assert reopened.for_run(RUN).list() == listed
