"""bulk_set and import: all rows or none, the skip reports, intra-batch verdicts, import keys."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core import Identity, Status
from memory_core.adapters.embedders import HashingEmbedder
from memory_core.api import Memory
from memory_core.errors import CharLimitExceeded, InvalidInput, MemcoreError
from memory_core.identity import Scope
from memory_core.model import Provenance
from memory_core.write.batch import import_key
from memory_core.write.settle import entry_request, make_request
from tests.conftest import T0, store_snapshot
from tests.faults import FaultyStore


@pytest.fixture
def memory(home, clock):
    """An indexed home whose version log can be made to fail inside a write's transaction."""
    with Memory(FaultyStore.open(home), clock, embedder=HashingEmbedder()) as m:
        yield m


@pytest.fixture
def tool(memory):
    t = memory.for_run(Identity(tenant="acme", user="ana", agent="helper", admin=True))
    t.configure(conflict_threshold=0.45)
    return t


def test_bulk_set_writes_every_entry_in_one_transaction_with_one_audit_row(tool, memory):
    tool.configure(policy="append_only")  # these rows share words; this test is about the write
    audit_before = len(memory.store.versions.audit_rows())
    words = ["apple", "brook", "cedar", "delta", "ember", "fjord", "grove", "heron", "inlet", "juniper"]
    result = tool.bulk_set([{"key": f"city{i}", "value": f"{words[i % 10]} {words[i // 10]} {i}"} for i in range(50)])
    assert len(result.written) == 50 and set(result.verdicts.values()) == {"created"}
    assert tool.get("city7").value == "heron apple 7"
    audit = memory.store.versions.audit_rows()[audit_before:]
    assert [a.entry.op for a in audit] == ["bulk_set"] and audit[0].entry.version_ids.startswith("50 rows sha256:")
    assert [h.key for h in tool.recall("heron apple 7", k=1).hits] == ["city7"]


@pytest.mark.parametrize("cap", [2000, 1], ids=["rows-judged", "fresh-tail-as-columns"])
def test_bulk_set_failing_in_the_middle_writes_nothing(tool, memory, cap):
    tool.configure(bulk_check_cap=cap)
    tool.set("kept", "a value written before the batch")
    before = store_snapshot(memory)

    def the_rows_went_in():
        inserted = memory.store.unchecked_sql("SELECT count(*) AS n FROM memory_versions")[0]["n"]
        assert inserted > 1  # the version rows are in, inside the open transaction

    memory.store.versions.fail_inside(
        lambda batch: batch.audits[0].op == "bulk_set", OSError("disk full while writing"), check=the_rows_went_in
    )
    with pytest.raises(OSError):
        tool.bulk_set([{"key": f"k{i}", "value": f"value {i}"} for i in range(200)])
    assert memory.store.versions.failed  # the fault was met inside the batch's transaction
    assert store_snapshot(memory) == before
    assert tool.get("k5") is None and tool.get("kept").value == "a value written before the batch"
    assert memory.verify_audit().ok
    assert [h.key for h in tool.recall("value 5").hits if h.key.startswith("k")] in ([], ["kept"])


def test_a_failed_embedding_beside_the_transaction_writes_nothing(tool, memory, monkeypatch):
    """Entries past the peer-check cap are embedded on a worker while the rows go in; the
    transaction waits for that call and rolls back when it fails."""
    tool.configure(bulk_check_cap=2)
    tool.set("kept", "a value written before the batch")
    before = store_snapshot(memory)
    embed, calls = memory.embedder.embed, []

    def second_call_fails(texts):
        calls.append(len(texts))
        if len(calls) == 2:
            raise RuntimeError("the embedding service went away")
        return embed(texts)

    monkeypatch.setattr(memory.embedder, "embed", second_call_fails)
    with pytest.raises(MemcoreError) as refused:
        tool.bulk_set([{"key": f"k{i}", "value": f"value number {i}"} for i in range(40)])
    assert refused.value.code == "EMBEDDER_UNAVAILABLE" and len(calls) == 2
    monkeypatch.undo()
    assert store_snapshot(memory) == before and memory.verify_audit().ok
    result = tool.bulk_set([{"key": f"k{i}", "value": f"value number {i}"} for i in range(40)])
    assert len(result.verdicts) == 40 and result.peer_checked == 2 and result.peer_check_skipped == 38
    assert tool.get("k39").value == "value number 39"
    assert [h.key for h in tool.recall("value number 33", k=1).hits] == ["k33"]


def test_a_bad_entry_refuses_the_whole_batch_and_names_it(tool, memory):
    before = store_snapshot(memory)
    with pytest.raises(InvalidInput) as refused:
        tool.bulk_set([{"key": "a", "value": 1}, {"key": "", "value": 2}])
    assert refused.value.details["entry"] == 1
    tool.configure(char_limit=5)
    before = store_snapshot(memory)
    with pytest.raises(CharLimitExceeded) as refused:
        tool.bulk_set([{"key": "a", "value": "ok"}, {"key": "b", "value": "far too long"}])
    assert refused.value.details["entry"] == 1 and store_snapshot(memory) == before


def test_bulk_set_reports_skipped_pinned_locked_unchanged_and_blacklisted(tool):
    tool.set("pinned1", "one", pin=True)
    tool.set("locked1", "two")
    tool.lock("locked1")
    tool.set("same1", "three")
    tool.configure(blacklist=["forbidden"])
    result = tool.bulk_set(
        [
            {"key": "pinned1", "value": "changed"},
            {"key": "locked1", "value": "changed"},
            {"key": "same1", "value": "three"},
            {"key": "bad1", "value": "a forbidden word"},
            {"key": "new1", "value": "fresh"},
            {"key": "new1", "value": "fresh"},
        ]
    )
    assert result.skipped_pinned == ("pinned1",) and result.skipped_locked == ("locked1",)
    assert result.skipped_unchanged == ("same1", "new1") and result.skipped_blacklisted == ("bad1",)
    assert result.verdicts == {"new1": "created"}
    assert tool.get("pinned1").value == "one" and tool.get("locked1").value == "two"


def test_a_repeated_value_writes_a_version_only_for_a_new_pin_sensitivity_or_ttl(tool):
    tool.set("s1", "three")
    result = tool.bulk_set([{"key": "s1", "value": "three", "pin": True}])
    assert result.verdicts == {"s1": "restated"} and tool.get("s1").pinned


def test_a_replayed_batch_never_establishes_a_proposal(tool):
    tool.set("team", "platform", proposed=True)
    result = tool.bulk_set([{"key": "team", "value": "platform"}])
    assert result.skipped_unchanged == ("team",) and tool.get("team").status is Status.PROPOSED


def test_last_writer_wins_per_key_inside_a_batch(tool):
    result = tool.bulk_set([{"key": "c1", "value": "Berlin"}, {"key": "c1", "value": "Paris"}])
    assert tool.get("c1").value == "Paris" and len(tool.history("c1")) == 3
    assert result.verdicts == {"c1": "superseded"}


def test_intra_batch_pairs_are_judged(tool):
    result = tool.bulk_set(
        [{"key": "t1", "value": "User prefers dark mode"}, {"key": "t2", "value": "User prefers light mode"}]
    )
    assert result.verdicts == {"t1": "created", "t2": "refines"}
    assert tool.get("t1") is None and tool.get("t2").value == "User prefers light mode"


def test_the_peer_check_reaches_only_the_first_bulk_check_cap_entries(tool):
    tool.configure(bulk_check_cap=1)
    result = tool.bulk_set(
        [{"key": "t1", "value": "User prefers dark mode"}, {"key": "t2", "value": "User prefers light mode"}]
    )
    assert (result.peer_checked, result.peer_check_skipped) == (1, 1)
    assert result.verdicts == {"t1": "created", "t2": "created"}


def test_bulk_dry_run_writes_nothing(tool, memory):
    before = store_snapshot(memory)
    result = tool.bulk_set([{"key": "t1", "value": "x"}], dry_run=True)
    assert result.dry_run and result.verdicts == {"t1": "created"} and store_snapshot(memory) == before


# -- import ------------------------------------------------------------------------------------


def test_import_keys_items_by_a_digest_of_their_text_and_writes_oldest_first(tool):
    items = [
        {"text": "moved to Lisbon", "valid_at": "2024-03-01T00:00:00Z"},
        "likes espresso",
        {"text": "moved to Porto", "valid_at": "2023-01-01T00:00:00Z"},
    ]
    result = tool.import_items(items)
    key = import_key("moved to Lisbon")
    assert key.startswith("import:") and len(key) == len("import:") + 24
    fact = tool.get(key)
    assert fact.source_class == "imported" and fact.value == "moved to Lisbon"
    order = [r.key for r in result.written if r.op.value == "set"]
    assert order == [import_key("moved to Porto"), import_key("moved to Lisbon"), import_key("likes espresso")]


def test_an_import_rerun_is_unchanged_and_reinforces_nothing(tool):
    tool.import_items(["likes espresso", "plays chess"])
    again = tool.import_items(["likes espresso", "plays chess"])
    assert again.written == () and len(again.skipped_unchanged) == 2
    assert tool.get(import_key("likes espresso")).reinforcement_count == 0


def test_an_import_leaves_a_deleted_or_rejected_key_as_it_is(tool):
    tool.import_items(["likes espresso", "plays chess"])
    tool.delete(import_key("likes espresso"))
    tool.reject(import_key("plays chess"))
    again = tool.import_items(["likes espresso", "plays chess"])
    assert set(again.left_as_is) == {import_key("likes espresso"), import_key("plays chess")}
    assert tool.get(import_key("likes espresso")) is None and again.written == ()


def test_an_import_dry_run_runs_every_check_and_writes_nothing(tool, memory):
    before = store_snapshot(memory)
    result = tool.import_items(["User prefers dark mode", "User prefers light mode"], dry_run=True)
    assert result.dry_run and result.peer_checked == 2 and store_snapshot(memory) == before


def test_import_refuses_a_malformed_item(tool, memory):
    before = store_snapshot(memory)
    with pytest.raises(InvalidInput):
        tool.import_items(["fine", {"value": "no text field"}])
    assert store_snapshot(memory) == before


def test_imported_rows_keep_their_valid_time(tool):
    tool.import_items([{"text": "moved to Porto", "valid_at": "2023-01-01T00:00:00Z"}])
    fact = tool.get(import_key("moved to Porto"), as_of=T0 - timedelta(days=300))
    assert fact is not None and fact.status is Status.ACTIVE


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(key=st.one_of(st.text(max_size=12), st.integers(), st.none()), value=_JSON)
def test_a_plain_entry_makes_the_request_every_default_makes(key, value):
    """The bulk shortcut for {key, value} answers (or refuses) exactly as the full option checks."""
    namespace = Identity(tenant="acme", user="ana").namespace(Scope.USER)
    provenance = Provenance(tenant="acme", actor="user:ana", origin="test")

    def outcome(make):
        try:
            return make()
        except MemcoreError as exc:
            return type(exc), exc.message.removeprefix("entry 0: ")

    assert outcome(lambda: entry_request(namespace, 0, {"key": key, "value": value}, provenance, T0)) == outcome(
        lambda: make_request(namespace, key, value, provenance, T0)
    )
