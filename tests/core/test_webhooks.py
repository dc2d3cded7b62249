"""Change webhooks against a real receiver on 127.0.0.1: every event type arrives signed and in
order; retries with backoff reach a receiver that recovers; one down past the deadline gets its
events dead-lettered; a write that rolls back announces nothing; two workers never send one
event at once."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest

from memory_core import FixedClock, Identity, Memory
from memory_core.errors import InvalidInput, WebhookNotFound
from memory_core.webhooks import WEBHOOK_EVENTS, DeliveryPolicy, sign, verify
from tests.conftest import store_snapshot
from tests.faults import FaultyStore
from tests.webhook_receiver import Receiver

FAST = DeliveryPolicy(backoff_base_s=1.0, jitter=0.0, cooldown_after=10, deadline_s=86400.0, lease_s=30.0)


@pytest.fixture
def receiver():
    running = Receiver().start()
    yield running
    running.stop()


@pytest.fixture
def hooked(home, clock, receiver):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        hook = memory.webhook_register("acme", receiver.url, secret="s" * 32)
        yield memory, hook


def drain(memory: Memory, clock: FixedClock, policy: DeliveryPolicy = FAST, passes: int = 20) -> None:
    """Delivery passes until nothing is left to send, the clock moving past each backoff."""
    for _ in range(passes):
        memory.deliver_webhooks(worker="w1", policy=policy)
        if not memory.store.webhooks.heads():
            return
        clock.advance(timedelta(seconds=policy.cooldown_s + policy.backoff_max_s))


def test_every_event_type_arrives_signed_in_order_without_values(hooked, clock, receiver):
    memory, hook = hooked
    ana = memory.for_run(Identity(tenant="acme", user="ana"))
    first = ana.set("gate", "the gate code is 7731").version
    clock.advance(timedelta(hours=1))
    ana.set("gate", "the gate code is 9904")  # revised
    ana.set("pet", "a cat named Miso")
    ana.delete("pet")  # tombstoned
    ana.restore("pet")  # restored
    ana.redact("gate", first.id)  # redacted
    memory.for_run(Identity(tenant="globex", user="zed")).set("city", "Oslo")  # another tenant: not sent
    memory.erase("acme", user="bea")  # erased (bea wrote nothing: still announced)
    drain(memory, clock)
    events = [r.event for r in receiver.delivered()]
    assert [e["type"] for e in events] == [
        "memory.written",
        "memory.revised",
        "memory.written",
        "memory.tombstoned",
        "memory.restored",
        "memory.redacted",
        "memory.erased",
    ]
    assert {e["type"] for e in events} == set(WEBHOOK_EVENTS)
    assert [e["key"] for e in events[:6]] == ["gate", "gate", "pet", "pet", "pet", "gate"]
    assert events[-1]["owner_id"] == "bea" and events[-1]["key"] is None
    assert all(e["tenant"] == "acme" for e in events)
    assert len({e["event_id"] for e in events}) == len(events)
    assert receiver.verified(hook.secret)
    bodies = b"".join(r.body for r in receiver.received)
    assert b"7731" not in bodies and b"Miso" not in bodies  # ids and the identity tuple, never a value
    for got in receiver.delivered():
        assert got.headers["X-Memcore-Event-Id"] == got.event["event_id"]
    attempts = memory.webhook_deliveries(hook.webhook_id)
    assert [a["outcome"] for a in attempts] == ["leased", "delivered"] * len(events)


def test_a_receiver_that_fails_three_times_gets_everything_once_it_recovers(hooked, clock, receiver):
    memory, hook = hooked
    receiver.fail_first = 3
    ana = memory.for_run(Identity(tenant="acme", user="ana"))
    for i in range(3):
        ana.set(f"k{i}", f"value {i}")
    due = []
    for _ in range(3):  # each failure waits longer: 1 s, 2 s, 4 s
        assert memory.deliver_webhooks(worker="w1", policy=FAST) == {"delivered": 0, "pending": 1, "dead": 0}
        [head] = memory.store.webhooks.heads()
        due.append((head["next_attempt_at"] - clock.now()).total_seconds())
        assert memory.deliver_webhooks(worker="w1", policy=FAST)["pending"] == 0  # not due yet: nothing sent
        clock.advance(timedelta(seconds=due[-1]))
    assert due == [1.0, 2.0, 4.0]
    assert memory.deliver_webhooks(worker="w1", policy=FAST) == {"delivered": 3, "pending": 0, "dead": 0}
    keys = [r.event["key"] for r in receiver.delivered()]
    assert keys == ["k0", "k1", "k2"]  # each once, in order, the failed one first
    assert [r.event["key"] for r in receiver.received[:3]] == ["k0"] * 3


def test_a_receiver_down_past_the_deadline_has_its_events_dead_lettered(hooked, clock, receiver):
    memory, hook = hooked
    receiver.stop()  # nothing listens on its port now
    memory.for_run(Identity(tenant="acme", user="ana")).set("city", "Lisbon")
    policy = DeliveryPolicy(backoff_base_s=60.0, jitter=0.0, deadline_s=600.0, timeout_s=1.0)
    assert memory.deliver_webhooks(worker="w1", policy=policy)["pending"] == 1
    clock.advance(timedelta(seconds=601))
    assert memory.deliver_webhooks(worker="w1", policy=policy)["dead"] == 1
    outcomes = [(a["outcome"], a["error"]) for a in memory.webhook_deliveries()]
    assert outcomes[-1] == ("dead", "not delivered in time")
    assert outcomes[1][0] == "pending" and "Connection refused" in outcomes[1][1]
    assert memory.store.webhooks.heads() == []  # nothing left to send, ever


def test_a_removed_webhook_gets_nothing_more_and_a_rotated_one_signs_with_the_new_secret(hooked, clock, receiver):
    memory, hook = hooked
    ana = memory.for_run(Identity(tenant="acme", user="ana"))
    ana.set("a", "one")
    rotated = memory.webhook_rotate("acme", hook.webhook_id)
    assert rotated.secret != hook.secret and rotated.version == 2
    drain(memory, clock)
    assert receiver.verified(rotated.secret) and not receiver.verified(hook.secret)
    ana.set("b", "two")
    memory.webhook_remove("acme", hook.webhook_id)
    ana.set("c", "three")  # no webhook takes it: no outbox row
    assert memory.deliver_webhooks(worker="w1", policy=FAST) == {"delivered": 0, "pending": 0, "dead": 1}
    assert [r.event["key"] for r in receiver.delivered()] == ["a"]
    assert [w.status for w in memory.webhooks("acme")] == ["removed"]
    with pytest.raises(WebhookNotFound):
        memory.webhook_rotate("acme", hook.webhook_id)


def test_a_write_that_rolls_back_announces_nothing(home, clock, receiver):
    store = FaultyStore.open(home)
    memory = Memory(store, clock)
    try:
        memory.webhook_register("acme", receiver.url)
        ana = memory.for_run(Identity(tenant="acme", user="ana"))
        ana.set("kept", "one")
        store.versions.fail_inside(lambda batch: True, OSError("disk full"))
        with pytest.raises(OSError):
            ana.set("lost", "two")
        ana.set("kept-too", "three")
        assert [e.body for e in store.webhooks.outbox()] and len(store.webhooks.outbox()) == 2
        memory.deliver_webhooks(worker="w1", policy=FAST)
        assert [r.event["key"] for r in receiver.delivered()] == ["kept", "kept-too"]
    finally:
        memory.close()


def test_two_workers_at_once_never_send_one_event_twice(hooked, clock, receiver):
    memory, hook = hooked
    receiver.delay_s = 0.05
    ana = memory.for_run(Identity(tenant="acme", user="ana"))
    for i in range(6):
        ana.set(f"k{i}", f"v{i}")
    workers = [
        threading.Thread(target=lambda n=n: [memory.deliver_webhooks(worker=f"w{n}", policy=FAST) for _ in range(4)])
        for n in range(3)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    drain(memory, clock)
    assert receiver.overlaps == 0
    assert [r.event["key"] for r in receiver.delivered()] == [f"k{i}" for i in range(6)]  # once each, in order
    assert len({a["worker"] for a in memory.webhook_deliveries() if a["outcome"] == "leased"}) >= 1


def test_bad_registrations_are_refused_and_write_nothing(memory):
    before = store_snapshot(memory)
    for bad in (
        {"url": "ftp://x"},
        {"url": "http://127.0.0.1:9/h", "events": ["memory.exploded"]},
        {"url": "http://127.0.0.1:9/h", "events": []},
        {"url": "http://127.0.0.1:9/h", "secret": "short"},
    ):
        url = bad.pop("url")
        with pytest.raises(InvalidInput):
            memory.webhook_register("acme", url, **bad)
    assert store_snapshot(memory) == before


def test_a_signature_is_refused_when_forged_or_replayed():
    body = json.dumps({"event_id": "e1"}).encode()
    header = f"t=1000,v1={sign('secret-secret-16', 1000, body)}"
    assert verify("secret-secret-16", header, body, 1100)
    assert not verify("secret-secret-16", header, body + b" ", 1100)  # the body was changed
    assert not verify("another-secret-16", header, body, 1100)  # signed with another secret
    assert not verify("secret-secret-16", header, body, 1000 + 301)  # replayed too late
    assert not verify("secret-secret-16", "v1=abc", body, 1000)  # no timestamp


def test_a_read_only_home_refuses_webhook_writes_typed(home, clock):
    with Memory.open(home, clock=clock) as memory:
        hook = memory.webhook_register("acme", "http://127.0.0.1:9/hook")
    with Memory.open(home, clock=clock, read_only=True) as reader:
        assert [w.webhook_id for w in reader.webhooks("acme")] == [hook.webhook_id]
        with pytest.raises(InvalidInput):
            reader.deliver_webhooks(worker="w1")
        with pytest.raises(InvalidInput):
            reader.webhook_register("acme", "http://127.0.0.1:9/other")
        with pytest.raises(InvalidInput):
            reader.erase("acme", user="ana")


def test_the_worker_skips_passes_while_no_webhook_is_active_and_resumes_when_one_is(home, clock, receiver):
    """An idle home costs the worker no pass (no statement to the store) but one every
    ``IDLE_PASS_EVERY`` rounds; a webhook registered meanwhile gets its events at the next round,
    and a removed one's events are dead-lettered by the pass after its removal."""
    from memory_core.api.webhook_worker import IDLE_PASS_EVERY, WebhookWorker

    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        worker = WebhookWorker(memory, 1.0, FAST)  # rounds run here, not on its thread
        ana = memory.for_run(Identity(tenant="acme", user="ana"))
        ana.set("city", "Lisbon")  # no webhook yet: nothing is announced
        for _ in range(5):
            worker.round()
        assert worker.passes == 1  # the first round looked; the rest had nothing to look for
        for _ in range(IDLE_PASS_EVERY):
            worker.round()
        assert worker.passes == 2  # but once every IDLE_PASS_EVERY rounds
        hook = memory.webhook_register("acme", receiver.url, secret="s" * 32)
        ana.set("city", "Porto")
        worker.round()
        assert worker.passes == 3 and worker.delivered == 1
        assert [r.event["type"] for r in receiver.delivered()] == ["memory.revised"]
        receiver.fail_first = 100  # down from here: the next event waits for a retry
        ana.set("city", "Faro")
        worker.round()
        memory.webhook_remove("acme", hook.webhook_id)
        worker.round()  # the last pass found work: this one runs, and dead-letters the event
        assert worker.passes == 5
        assert [a["outcome"] for a in memory.webhook_deliveries(hook.webhook_id)][-1] == "dead"
        worker.round()
        worker.round()
        assert worker.passes == 6  # found nothing, no webhook active: idle again
        worker.round()
        assert worker.passes == 6
