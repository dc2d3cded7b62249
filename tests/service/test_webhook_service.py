"""The service's delivery worker against a real receiver: webhooks registered through the admin
routes, events delivered by the worker thread, and a service killed mid-delivery (SIGKILL while
the receiver holds the POST) sends the same event again after its restart (at least once, one
event id)."""

from __future__ import annotations

import signal
import time

import pytest

from memory_core import Memory
from memory_core.client import RemoteMemory
from memory_core.errors import Unauthenticated
from tests.service.process import service
from tests.webhook_receiver import Receiver


def _keys(home) -> tuple[str, str]:
    with Memory.open(home, embedder="hashing") as memory:
        admin = memory.keys.create(tenant="acme", user="ops", admin=True)[0]
        writer = memory.keys.create(tenant="acme", user="ana", agent="a")[0]
    return admin, writer


def _wait(check, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


def test_the_worker_delivers_and_a_killed_service_delivers_again_after_restart(tmp_path):
    home = tmp_path / "home"
    admin, writer = _keys(home)
    receiver = Receiver(delay_s=30.0).start()  # holds the first POST until the service is gone
    settings = {"webhook_interval_s": 0.05, "webhook_lease_s": 1.0}
    try:
        with service(home, **settings) as running:
            with RemoteMemory(running.url, admin) as remote:
                hook = remote.webhook_register("acme", receiver.url)
                assert hook.secret.startswith("whsec_")
                assert [w.webhook_id for w in remote.webhooks("acme")] == [hook.webhook_id]
            with RemoteMemory(running.url, writer) as remote:
                remote.tool().set("city", "Lisbon")
            _wait(lambda: len(receiver.received) == 1)  # the worker is sending it now
            running.signal(signal.SIGKILL)
            assert running.wait() == -signal.SIGKILL
        receiver.delay_s = 0.0
        first = receiver.received[0].event["event_id"]
        with service(home, **settings) as restarted:
            _wait(lambda: len(receiver.received) >= 2)  # its lease ran out: sent again
            with RemoteMemory(restarted.url, admin) as remote:
                _wait(lambda: any(a["outcome"] == "delivered" for a in remote.webhook_deliveries()))
                attempts = remote.webhook_deliveries(hook.webhook_id)
        again = receiver.received[1]
        assert again.event["event_id"] == first and again.status == 200
        assert receiver.verified(hook.secret)
        assert [a["outcome"] for a in attempts] == ["leased", "leased", "delivered"]  # the first never settled
    finally:
        receiver.stop()


def test_an_erasure_through_the_service_answers_its_request(tmp_path):
    home = tmp_path / "home"
    admin, writer = _keys(home)
    with service(home, webhook_interval_s=0.0) as running:
        with RemoteMemory(running.url, writer) as remote:
            remote.tool().set("city", "the zebracrossing flat in Lisbon")
        with RemoteMemory(running.url, admin) as remote:
            request = remote.erase("acme", user="ana")
            assert request.status.value == "verified" and request.residue_count == 0
            assert request.actor.startswith("key:")
            assert [r.request_id for r in remote.erasures()] == [request.request_id]
            assert remote.erasures(request.request_id)[0] == request
        with RemoteMemory(running.url, writer) as remote:  # ana's key went with her
            with pytest.raises(Unauthenticated):
                remote.tool().get("city")
