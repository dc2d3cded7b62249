"""The validation boundary, one regression test per class of bad input that once escaped as a raw
Python or DuckDB exception (or was accepted): each is now a typed ``InvalidInput`` (a
``MemcoreError``) and the store is exactly as it was.

The batch rule: malformed input anywhere in a batch (bulk_set, import_items) refuses the whole
batch, and the error names the entry (``details["entry"]``, its index in the list as given);
what the store decides per entry (locked, pinned, blacklisted, unchanged, rejected) is reported
per entry in the result.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone

import pytest

from memory_core import Identity, Memory, MemoryTool
from memory_core.api.validate import MEMORY_RULES, TOOL_RULES, unchecked
from memory_core.errors import (
    InvalidInput,
    MalformedTimestamp,
    MemcoreError,
    NotUtf8,
    UnknownOption,
    ValueTooDeep,
    ValueTooLarge,
)
from memory_core.identity import Namespace, Scope
from memory_core.inputs import MAX_DEPTH
from memory_core.model import Provenance
from memory_core.write.options import SetOptions
from memory_core.write.settle import make_request
from tests.conftest import T0, store_snapshot
from tests.fuzz_values import nested

LONE = "\ud800"


def refused(memory: Memory, call, error: type[MemcoreError] = InvalidInput) -> MemcoreError:
    """``call`` raises ``error`` (typed, 4xx) and writes nothing."""
    before = store_snapshot(memory)
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, MemcoreError) and 400 <= info.value.status < 500
    assert store_snapshot(memory) == before
    return info.value


@pytest.fixture
def seeded(memory, tool):
    tool.set("k", "existing")
    tool.sql_exec("CREATE TABLE t (a VARCHAR)")
    return tool


SURROGATE_CALLS = {
    "key": lambda t: t.set("k" + LONE, 1),
    "value": lambda t: t.set("k", "v" + LONE),
    "value's object name": lambda t: t.set("k", {LONE: 1}),
    "nested value": lambda t: t.set("k", [{"a": ["x", LONE]}]),
    "subject": lambda t: t.set("k", 1, subject=LONE),
    "context": lambda t: t.set("k", 1, context=LONE),
    "relation": lambda t: t.set("k", 1, relations=[["ana", "lives_in", "par" + LONE]]),
    "relation object form": lambda t: t.set("k", 1, relations=[{"subject": LONE, "relation": "r", "object": "o"}]),
    "document body": lambda t: t.doc_put("d", "# T\n\nbody " + LONE),
    "document metadata": lambda t: t.doc_put("d", "# T\n\nbody", metadata={"lang": LONE}),
    "document title": lambda t: t.doc_put("d", "# T\n\nbody", title=LONE),
    "document key": lambda t: t.doc_put("d" + LONE, "# T"),
    "SQL text": lambda t: t.sql_exec(f"INSERT INTO t VALUES ('{LONE}')"),
    "SQL parameter": lambda t: t.sql_exec("INSERT INTO t VALUES (?)", [LONE]),
    "SQL named parameter": lambda t: t.sql_exec("INSERT INTO t VALUES ($a)", {"a": LONE}),
    "bulk entry": lambda t: t.bulk_set([{"key": "a", "value": 1}, {"key": "b", "value": LONE}]),
    "import item": lambda t: t.import_items(["fine", "not" + LONE]),
    "transcript": lambda t: t.set_from_messages([{"role": "user", "content": "I live in " + LONE}]),
    "query": lambda t: t.recall("where" + LONE),
    "ontology": lambda t: t.ontology_set("## person\n" + LONE),
}


@pytest.mark.parametrize("where", SURROGATE_CALLS)
def test_lone_surrogates_anywhere_are_not_utf8(memory, seeded, where):
    error = refused(memory, lambda: SURROGATE_CALLS[where](seeded), NotUtf8)
    assert error.code == "NOT_UTF8"


def test_lone_surrogates_in_sql_leave_the_scope_database_as_it_was(memory, seeded):
    seeded.sql_exec("INSERT INTO t VALUES ('kept')")
    for call in (SURROGATE_CALLS["SQL text"], SURROGATE_CALLS["SQL parameter"]):
        with pytest.raises(NotUtf8):
            call(seeded)
    assert seeded.sql_query("SELECT * FROM t").rows == (("kept",),)


def test_deeply_nested_values_are_too_deep_not_a_recursion_error(memory, seeded):
    for value in (nested(10_000), nested(10_000, "dict"), nested(MAX_DEPTH + 1)):
        refused(memory, lambda v=value: seeded.set("k", v), ValueTooDeep)
    loop: list = []
    loop.append(loop)
    refused(memory, lambda: seeded.set("k", loop), ValueTooDeep)
    refused(memory, lambda: seeded.bulk_set([{"key": "k", "value": nested(5_000)}]), ValueTooDeep)
    # The limit is the same for a point write and a batch: the batch's own levels do not count.
    assert seeded.set("deep", nested(MAX_DEPTH)).verdict == "created"
    assert seeded.bulk_set([{"key": "deep2", "value": nested(MAX_DEPTH)}]).verdicts == {"deep2": "created"}
    assert seeded.restore_snapshot(seeded.snapshot()).verdict in ("restored", "already_restored")


def test_values_past_the_size_limit_are_too_large(memory, seeded):
    refused(memory, lambda: seeded.set("k", "x" * 1_000_001), ValueTooLarge)
    refused(memory, lambda: seeded.recall("q" * 1_000_001), ValueTooLarge)


@pytest.mark.parametrize("ttl", [float("nan"), float("inf"), -float("inf"), 1e300, 10**400, 0, -5, True, "60"])
def test_ttl_seconds_is_finite_positive_and_bounded(memory, seeded, ttl):
    error = refused(memory, lambda: seeded.set("k2", 1, ttl_seconds=ttl))
    assert error.details["field"] == "ttl_seconds"
    refused(memory, lambda: seeded.bulk_set([{"key": "k2", "value": 1, "ttl_seconds": ttl}]))


def test_unknown_options_are_refused_by_name(memory, seeded):
    error = refused(memory, lambda: seeded.set("k", 1, colour="red"), UnknownOption)
    assert error.code == "UNKNOWN_OPTION" and error.details["option"] == "colour"
    assert "ttl_seconds" in error.details["known"] and "'colour'" in error.message
    error = refused(memory, lambda: seeded.doc_put("d", "# T", tags=["x"]), UnknownOption)
    assert error.details["option"] == "tags" and "metadata" in error.details["known"]
    error = refused(memory, lambda: seeded.bulk_set([{"key": "a", "value": 1}, {"key": "b", "value": 2, "ttl": 5}]))
    assert isinstance(error, UnknownOption) and error.details["entry"] == 1 and error.details["option"] == "ttl"
    namespace = Namespace("acme", Scope.USER, "ana")
    provenance = Provenance.of(Identity(tenant="acme", user="ana"), "test")
    with pytest.raises(UnknownOption, match="'shade'"):
        make_request(namespace, "k", 1, provenance, T0, shade=1)  # the request builder, as extraction steps call it
    refused(memory, lambda: seeded.get("k", colour="red"), UnknownOption)


def test_set_options_are_one_typed_frozen_value():
    options = SetOptions.parse({"ttl_seconds": 60, "pin": True, "relations": [["ana", "lives in", "Paris"]]})
    assert options.ttl_seconds == 60.0 and options.pin and options.relations[0].triple == ("ana", "lives_in", "paris")
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.pin = False  # type: ignore[misc]
    with pytest.raises(UnknownOption):
        SetOptions.parse({"pinned": True})


@pytest.mark.parametrize("batch", ["abc", b"abc", {"key": "k", "value": 1}, {1, 2}, None, 5, iter([])])
def test_non_list_batches_are_refused(memory, seeded, batch):
    refused(memory, lambda: seeded.bulk_set(batch))
    refused(memory, lambda: seeded.import_items(batch))


@pytest.mark.parametrize(
    "text",
    [
        "2024-01-01T00:00:00Z\x00",
        "2024-01-01T00:00:00\x00+00:00",
        "2024-01-01T00:00:00+00:00 garbage",
        "20240101T000000+0000",
        "2024-W01-1T00:00+00:00",
        "2024-01-01T00:00:00Z\x1f",
        "9999-12-31T23:59:59-05:00",  # no UTC instant in range
        "9999-12-31T23:59:59Z",  # after the store's end of time
    ],
)
def test_instants_parse_strictly(memory, seeded, text):
    refused(memory, lambda: seeded.set("k", 1, valid_at=text), MalformedTimestamp)
    refused(memory, lambda: seeded.get("k", as_of=text), MalformedTimestamp)
    refused(memory, lambda: seeded.rollback(text, apply=True), MalformedTimestamp)


def test_dates_at_the_ends_of_the_calendar_are_typed_or_unresolved(memory, seeded):
    first = datetime.min.replace(tzinfo=timezone.utc)
    refused(memory, lambda: seeded.set("k", 1, valid_at=datetime.max.replace(tzinfo=timezone.utc)), MalformedTimestamp)
    refused(memory, lambda: seeded.get("k", as_of=datetime.max.replace(tzinfo=timezone(timedelta(hours=-1)))))
    # Relative dates said on the calendar's first day, or naming no real year, resolve to nothing.
    said = [
        {"role": "user", "content": "I moved to Rome yesterday."},
        {"role": "user", "content": "I lived in Oslo in 0000."},
    ]
    assert seeded.set_from_messages(said, session_date=first).dry_run is False
    seeded.enqueue_extraction([{"role": "user", "content": "I moved to Lima last year."}], session_date=first)
    assert memory.run_extraction_queue()["done"] == 1


@pytest.mark.parametrize("confidence", [float("nan"), float("inf"), 1.5, -0.1, 0, True, "0.5"])
def test_confidence_is_finite_in_the_unit_interval(memory, seeded, confidence):
    refused(memory, lambda: seeded.set("k3", 1, confidence=confidence))
    refused(memory, lambda: seeded.bulk_set([{"key": "k3", "value": 1, "confidence": confidence}]))


@pytest.mark.parametrize("flag", ["yes", "no", "", 1, 0, None])
def test_flags_are_strict_booleans_in_every_op(memory, seeded, flag):
    refused(memory, lambda: seeded.rollback("2020-01-01T00:00:00Z", apply=flag))
    # set and bulk_set answer the same: a flag that is not a bool is refused, never read as truthy.
    refused(memory, lambda: seeded.set("k", 2, dry_run=flag))
    refused(memory, lambda: seeded.bulk_set([{"key": "k", "value": 2}], dry_run=flag))
    refused(memory, lambda: seeded.import_items(["text"], dry_run=flag))
    refused(memory, lambda: seeded.set("k", 2, pin=flag))
    refused(memory, lambda: seeded.set_from_messages([{"role": "user", "content": "I live in Paris."}], dry_run=flag))


@pytest.mark.parametrize("params", [{1, 2}, frozenset({"a"}), [[1, 2]], [{"a": 1}], [2**200], "ab", 7])
def test_sql_parameters_are_a_list_or_an_object_of_plain_values(memory, seeded, params):
    before = seeded.sql_query("SELECT count(*) FROM t").rows
    refused(memory, lambda: seeded.sql_exec("INSERT INTO t VALUES (?)", params))
    refused(memory, lambda: seeded.sql_query("SELECT ?", params))
    assert seeded.sql_query("SELECT count(*) FROM t").rows == before


def test_a_bad_entry_refuses_the_whole_batch_and_names_its_index(indexed_memory):
    tool = indexed_memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
    tool.set("seed", "seeded")
    # The second entry's key cannot be stored; its value equals the first's, so the peer check
    # would merge it away (and nothing would fail) if the key were not checked first.
    same = "Ana moved to Lisbon in the spring of 2024 and works at the harbour"
    batch = [{"key": "a", "value": same}, {"key": "b" + LONE, "value": same}]
    error = refused(indexed_memory, lambda: tool.bulk_set(batch), NotUtf8)
    assert error.details["entry"] == 1 and error.message.startswith("entry 1:")
    error = refused(indexed_memory, lambda: tool.bulk_set([{"key": "a", "value": 1}, {"key": "", "value": 1}]))
    assert error.details["entry"] == 1
    error = refused(indexed_memory, lambda: tool.import_items(["fine", {"text": "x", "valid_at": "soon"}]))
    assert error.details["entry"] == 1
    assert tool.get("a") is None


def test_memory_ops_check_their_arguments(memory, tool):
    refused(memory, lambda: memory.for_run("acme"))
    refused(memory, lambda: memory.run_extraction_queue(limit=True))
    refused(memory, lambda: memory.run_extraction_queue(lease_s=float("nan")))
    refused(memory, lambda: memory.sweep_expired(actor=LONE), NotUtf8)
    refused(memory, lambda: memory.reindex(progress=5))
    refused(memory, lambda: memory.bank_harvest(tool.identity, {"span": []}, capacity=5), UnknownOption)
    with pytest.raises(InvalidInput):
        Memory.open(memory.home / ("x" + "\x00"))


def test_a_malformed_queued_job_fails_alone_and_never_the_worker(memory, tool):
    tool.enqueue_extraction([{"role": "user", "content": "I live in Paris."}])
    memory.store.queue.enqueue(
        "xq-broken", tool.identity.namespace("user"), "agent:helper", "extract", {"messages": []}, T0, max_attempts=1
    )
    counts = memory.run_extraction_queue(limit=5)
    assert counts["claimed"] == 2 and counts["failed"] == 1 and counts["done"] == 1


def test_every_argument_of_every_public_op_has_a_rule():
    assert unchecked(MemoryTool, TOOL_RULES) == []
    assert unchecked(Memory, MEMORY_RULES) == []
