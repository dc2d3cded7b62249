"""The substrate and the webhook outbox of a PostgreSQL authority: records read back as written by
another process (nothing is cached), event seqs unique, contiguous and in commit order when
several processes write at once, and an outbox row that goes from a write to a delivery, with a
claim that two workers in two processes never both win."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import pytest

from memory_core.adapters.postgres.connection import PgConnection
from memory_core.identity import Namespace, Scope
from memory_core.substrate.decisions import Interaction
from memory_core.substrate.lenses import Assignment, Capability, PermissionGroup, parse_lens
from memory_core.webhooks import OutboxEvent
from tests.conftest import T0
from tests.postgres.conftest import connect
from tests.postgres.substrate_kit import Ports, change, decision, entry, frame, hook, ports, write

ANA = Namespace("acme", Scope.USER, "ana")


@pytest.fixture
def two(pg_url: str, tmp_path: Path):
    """The ports over two connections to one authority: two replicas."""
    dbs = [connect(pg_url), connect(pg_url)]
    try:
        yield [ports(db, tmp_path / "keys") for db in dbs]
    finally:
        for db in dbs:
            db.close()


def test_records_read_back_from_another_process(two: list[Ports]) -> None:
    a, b = two
    lens = parse_lens("acme", "ops", {"title": "Ops"}, None, version=1, defined_at=T0, defined_by="admin")
    lens2 = parse_lens("acme", "ops", {"title": "Ops 2"}, None, version=2, defined_at=T0, defined_by="admin")
    group = PermissionGroup("acme", "writers", 1, frozenset({Capability.CAPTURE}), T0, "admin")
    group2 = PermissionGroup("acme", "writers", 2, frozenset({Capability.CAPTURE, Capability.DECIDE}), T0, "admin")
    on = Assignment("acme", "ops", "user:ana", 1, True, T0, "admin")
    off = Assignment("acme", "ops", "user:ana", 2, False, T0 + timedelta(seconds=1), "admin")
    closed = frame("f1", version=2, status="closed", closed_at=T0 + timedelta(hours=1), summary="done")
    records = [lens, group, on, frame("f1"), decision("d1"), lens2, group2, off, closed, frame("f2", version=3)]
    assert write(a, [], records) == 0
    write(a, [change("e1", frame_id="f1"), change("e2", frame_id="f1", key="k2")], [decision("d1", version=2)])

    assert b.substrate.lenses("acme") == [lens2] and b.substrate.lenses("globex") == []
    assert b.substrate.assignments("acme") == [off] and b.substrate.assignments("acme", "user:bob") == []
    assert b.substrate.permission_groups("acme") == {"writers": group2.permissions}
    assert b.substrate.group_versions("acme") == {"writers": 2}
    assert b.substrate.frame_versions("acme", "f1") == [frame("f1"), closed]
    assert b.substrate.frames_by_id("acme", ["f1", "f2", "nope"]) == [closed, frame("f2", version=3)]
    assert b.substrate.frames("acme", "user:ana") == [frame("f2", version=3), closed]  # newest opened first
    assert b.substrate.frames("acme", "user:ana", status="open") == [frame("f2", version=3)]
    assert b.substrate.decisions([ANA]) == [decision("d1", version=2)] and b.substrate.decisions([]) == []
    assert b.substrate.decision("acme", "d1") == decision("d1", version=2)
    assert [e.event_id for e in b.substrate.events([ANA], 0, 10)] == ["e1", "e2"]
    assert [e.seq for e in b.substrate.events([ANA], 1, 10, types=["fact.*"])] == [2]
    assert b.substrate.events([ANA], 0, 10, types=["fact.superseded"]) == []
    assert b.substrate.footprint("acme", "f1") == ["fact:f-e1", "fact:f-e2"]
    assert b.audit.verify().ok

    # Two answers at one instant (a fixed clock) surface their refs in the order they were kept.
    for n, refs in enumerate([("fact:b", "fact:a"), ("fact:c", "fact:a")]):
        said = Interaction(f"i{n}", "acme", "user:ana", "render", ("ops",), "f1", "q", refs, None, None, T0, {"n": n})
        a.substrate.record_answer(said, None)
    assert b.substrate.surfaced("acme", "f1") == ["fact:b", "fact:a", "fact:c"]
    assert b.substrate.interaction("acme", "i1") == said and b.substrate.interaction("globex", "i1") is None


def test_event_seqs_stay_unique_and_in_commit_order_across_processes(two: list[Ports]) -> None:
    """Four writers over two connections append 1-3 events a write: the seqs are 1..N with no
    gap or duplicate, each write's events consecutive, and seq order is the chain's order."""
    errors: list[BaseException] = []

    def writer(p: Ports, name: str) -> None:
        try:
            for i in range(12):
                events = [change(f"{name}-{i}-{j}", key=f"{name}-{i}") for j in range(1 + i % 3)]
                write(p, events, key=f"{name}-{i}")
        except Exception as exc:  # noqa: BLE001  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(p, f"w{n}-{i}")) for n, p in enumerate(two) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    a, b = two
    rows = a.db.rows("SELECT seq, audit_seq, event_id FROM state_changes ORDER BY seq")
    total = 4 * sum(1 + i % 3 for i in range(12))
    assert [r[0] for r in rows] == list(range(1, total + 1))
    assert [r[1] for r in rows] == sorted(r[1] for r in rows)  # numbered in commit order
    by_write: dict[int, list[int]] = {}
    for seq, audit_seq, _ in rows:
        by_write.setdefault(audit_seq, []).append(seq)
    assert all(seqs == list(range(seqs[0], seqs[0] + len(seqs))) for seqs in by_write.values())
    assert a.substrate.last_event_seq() == b.substrate.last_event_seq() == total
    assert b.audit.verify().ok


def test_a_write_that_rolls_back_leaves_no_event_and_no_outbox_row(two: list[Ports]) -> None:
    a, b = two
    a.webhooks.put(hook("acme", "h1"), entry(key="webhook:h1", op="webhook"))
    write(b, [change("e1")])
    with pytest.raises(OSError):
        with b.audit.transaction([entry()]) as tx:
            b.substrate.write(tx, [change("lost")], [frame("f9")])
            raise OSError("disk full")
    write(a, [change("e2")])
    assert [e.event_id for e in a.substrate.events([ANA], 0, 10)] == ["e1", "e2"]
    assert [(e.event_id, e.seq) for e in b.webhooks.outbox()] == [("e1", 1), ("e2", 2)]
    assert a.substrate.frame_versions("acme", "f9") == [] and a.audit.verify().ok


def test_an_outbox_row_goes_from_a_write_to_its_delivery(two: list[Ports]) -> None:
    a, b = two
    a.webhooks.put(hook("acme", "h1"), entry(key="webhook:h1", op="webhook"))
    # Registered by the other replica: this one's next write announces to it (no stale copy).
    assert [w.webhook_id for w in b.webhooks.active()] == ["h1"]
    write(b, [change("e1"), change("e2", event_type="fact.superseded"), change("z1", tenant="globex")])
    write(b, [change("e3", key="k3")])
    assert [(e.event_id, e.event_type, e.seq) for e in a.webhooks.outbox("h1")] == [
        ("e1", "memory.written", 1),
        ("e3", "memory.written", 2),
    ]  # the hook takes memory.written only; globex has none

    [head] = a.webhooks.heads()
    assert (head["event_id"], head["outcome"], head["attempts"]) == ("e1", None, 0)
    assert [h["event_id"] for h in a.webhooks.heads(per_webhook=5)] == ["e1", "e3"]
    now = T0 + timedelta(minutes=1)
    attempt = b.webhooks.claim("e1", "h1", "w1", now, now + timedelta(seconds=30))
    assert attempt == 1 and a.webhooks.claim("e1", "h1", "w2", now, now + timedelta(seconds=30)) is None
    a.webhooks.record("e1", "h1", 1, "pending", "w1", now, now + timedelta(seconds=5), 500, "boom")
    [head] = b.webhooks.heads()
    assert (head["outcome"], head["attempts"], head["failures"]) == ("pending", 1, 1)
    assert a.webhooks.claim("e1", "h1", "w2", now, now + timedelta(seconds=30)) is None  # not due yet
    later = now + timedelta(seconds=6)
    assert a.webhooks.claim("e1", "h1", "w2", later, later + timedelta(seconds=30)) == 2
    b.webhooks.record("e1", "h1", 2, "delivered", "w2", later, None, 200, None)
    assert b.webhooks.claim("e1", "h1", "w3", later, later) is None  # settled
    assert [h["event_id"] for h in a.webhooks.heads()] == ["e3"]
    assert [(d["outcome"], d["attempt"]) for d in b.webhooks.deliveries("h1")] == [
        ("leased", 1),
        ("pending", 1),
        ("leased", 2),
        ("delivered", 2),
    ]
    assert [u["event_id"] for u in a.webhooks.unsettled()] == ["e3"]

    # The erasure's announcement, appended on its own: once, however often it is retried.
    erased = OutboxEvent("x1", "h1", "memory.erased", "acme", "user", "bea", "{}", later)
    assert a.webhooks.append_committed([erased]) == 1 and b.webhooks.append_committed([erased]) == 0
    assert [e.seq for e in a.webhooks.outbox()] == [1, 2, 3]

    # Removed by one replica: the other's next write announces nothing more.
    a.webhooks.put(hook("acme", "h1", version=2, status="removed"), entry(key="webhook:h1", op="webhook"))
    write(b, [change("e4", key="k4")])
    assert len(b.webhooks.outbox()) == 3 and b.webhooks.active() == ()
    assert [w.status for w in b.webhooks.webhooks("acme")] == ["removed"] and b.webhooks.webhooks("globex") == []
    assert a.audit.verify().ok


def test_two_workers_in_two_processes_never_lease_one_event_both(two: list[Ports]) -> None:
    a, b = two
    a.webhooks.put(hook("acme", "h1"), entry(key="webhook:h1", op="webhook"))
    rounds = 15
    write(a, [change(f"e{i}", key=f"k{i}") for i in range(rounds)])
    won: list[tuple[str, int | None]] = []
    for i in range(rounds):
        gate = threading.Barrier(2)

        def claim(p: Ports, worker: str, event_id: str = f"e{i}", gate: threading.Barrier = gate) -> None:
            gate.wait()
            won.append((worker, p.webhooks.claim(event_id, "h1", worker, T0, T0 + timedelta(seconds=30))))

        threads = [threading.Thread(target=claim, args=(p, f"w{n}")) for n, p in enumerate(two)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(won) == 2 * rounds
    assert sum(1 for _, attempt in won if attempt == 1) == rounds  # one winner a round
    assert sum(1 for _, attempt in won if attempt is None) == rounds
    assert len(b.webhooks.deliveries()) == rounds  # one lease an event


def test_the_outbox_is_appended_only_under_the_write_lock(pg_db: PgConnection, tmp_path: Path) -> None:
    p = ports(pg_db, tmp_path / "keys")
    event = OutboxEvent("x1", "h1", "memory.erased", "acme", "user", "bea", "{}", T0)
    with pg_db.tx() as tx, pytest.raises(Exception, match="write lock"):
        p.webhooks.append(tx, [event])
