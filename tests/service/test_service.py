"""The service's own guarantees: who may call (keys: made, listed, revoked, expired; admin routes),
how it refuses (every refusal typed, with its status), its limits (body size, rate, time), what it
publishes (/healthz, /metrics, the OpenAPI schema) and what it logs (never a value)."""

from __future__ import annotations

import json
import logging
import threading
import time
from datetime import timedelta

import httpx
import pytest

from memory_core import FixedClock, Identity, Memory
from memory_core.adapters.embedders import HashingEmbedder
from memory_core.api.ops import TOOL_OPS
from memory_core.client import RemoteMemory
from memory_core.errors import AdminRequired, ScopeForbidden, Unauthenticated
from memory_core.service import ServiceSettings, ThreadedServer
from tests.conftest import T0, store_snapshot


class GatedEmbedder(HashingEmbedder):
    """An embedder (a port implementation) that waits for the test to open a gate: an op that
    runs longer than the service's request timeout, on demand."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.gate.set()

    def embed(self, texts):
        self.gate.wait(timeout=10)
        return super().embed(texts)


@pytest.fixture
def timeout_s():
    return 30.0


@pytest.fixture
def rate_per_s():
    return 1000.0


@pytest.fixture
def served(tmp_path, timeout_s, rate_per_s):
    clock = FixedClock(T0)
    embedder = GatedEmbedder()
    memory = Memory.open(tmp_path / "home", clock=clock, embedder=embedder)
    settings = ServiceSettings(
        max_body_bytes=64 * 1024, rate_per_s=rate_per_s, rate_burst=5, request_timeout_s=timeout_s
    )
    server = ThreadedServer(memory, settings).start()
    yield memory, server, clock, embedder
    embedder.gate.set()
    server.stop()
    memory.close()


def post(server, path, token=None, headers=None, **kw):
    headers = {**(headers or {}), **({"Authorization": f"Bearer {token}"} if token else {})}
    return httpx.post(f"{server.url}{path}", headers=headers, **kw)


def test_keys_are_made_listed_and_revoked_by_admin_keys_only(served):
    memory, server, clock, _ = served
    admin, _ = memory.keys.create(tenant="ops", user="root", admin=True)
    with RemoteMemory(server.url, admin) as operator:
        token, made = operator.create_key("acme", user="ana", agent="helper", label="ana's agent")
        assert token.startswith("mck_") and made["tenant"] == "acme" and made["state"] == "active"
        listed = operator.list_keys("acme")
        assert [k["key_id"] for k in listed] == [made["key_id"]]
        assert "secret" not in json.dumps(listed) and token.split("_", 2)[2] not in json.dumps(listed)
        with RemoteMemory(server.url, token) as agent:
            assert agent.tool().set("k", "v").verdict == "created"
            with pytest.raises(AdminRequired):
                agent.create_key("acme", user="eve")
            with pytest.raises(AdminRequired):
                agent.sweep_expired()
            with pytest.raises(ScopeForbidden):  # only an admin key reaches scope global
                agent.tool().get("k", scope="global")
            assert operator.revoke_key(made["key_id"])["state"] == "revoked"
            with pytest.raises(Unauthenticated):
                agent.tool()
    assert memory.verify_audit().ok  # key changes are audited, and their rows bound by the chain


def test_an_expired_key_is_refused_like_an_unknown_one(served):
    memory, server, clock, _ = served
    token, _ = memory.keys.create(tenant="acme", user="ana", expires_at=T0 + timedelta(hours=1))
    assert post(server, "/v1/get", token, json={"key": "k"}).status_code == 200
    clock.advance(timedelta(hours=2))
    expired = post(server, "/v1/get", token, json={"key": "k"})
    unknown = post(server, "/v1/get", "mck_" + "0" * 16 + "_" + "A" * 43, json={"key": "k"})
    missing = post(server, "/v1/get", json={"key": "k"})
    assert expired.status_code == unknown.status_code == missing.status_code == 401
    assert expired.json() == unknown.json() == missing.json()
    assert expired.json()["error"]["code"] == "UNAUTHENTICATED"


@pytest.mark.parametrize(
    "body, status, code",
    [
        (b"{not json", 400, "MALFORMED_REQUEST"),
        (b"[1, 2]", 400, "MALFORMED_REQUEST"),
        (b"\xff\xfe", 400, "MALFORMED_REQUEST"),
        (b'{"key": "k", "value": "v", "nope": 1}', 422, "UNKNOWN_OPTION"),
        (b'{"value": "v"}', 422, "INVALID_INPUT"),
        (b'{"key": "", "value": "v"}', 422, "EMPTY_KEY"),
        (b'{"key": "k", "value": "v", "scope": "galaxy"}', 422, "UNKNOWN_SCOPE"),
        (b'{"key": "k", "value": "v", "valid_at": "yesterday"}', 422, "MALFORMED_TIMESTAMP"),
        (b'{"key": "k", "value": "v", "extractor": "mine"}', 422, "INVALID_INPUT"),
        (b'{"key": "k", "value": "' + b"x" * 70_000 + b'"}', 413, "BODY_TOO_LARGE"),
    ],
    ids=[
        "malformed",
        "not-an-object",
        "not-utf8",
        "unknown-option",
        "missing",
        "empty-key",
        "scope",
        "time",
        "local-only",
        "too-large",
    ],
)
def test_every_refusal_is_typed_and_writes_nothing(served, body, status, code):
    memory, server, _, _ = served
    token, _ = memory.keys.create(tenant="acme", user="ana")
    before = store_snapshot(memory)
    answer = post(server, "/v1/set", token, content=body, headers={"Content-Type": "application/json"})
    assert (answer.status_code, answer.json()["error"]["code"]) == (status, code), answer.text
    assert store_snapshot(memory) == before


def test_unknown_routes_and_methods_are_typed(served):
    memory, server, _, _ = served
    token, _ = memory.keys.create(tenant="acme", user="ana")
    assert post(server, "/v1/teleport", token, json={}).json()["error"]["code"] == "UNKNOWN_OP"
    wrong = httpx.get(f"{server.url}/v1/set", headers={"Authorization": f"Bearer {token}"})
    assert wrong.status_code == 405 and wrong.json()["error"]["code"] == "METHOD_NOT_ALLOWED"


@pytest.mark.parametrize("rate_per_s", [0.5])
def test_a_key_over_its_rate_is_told_when_to_come_back(served):
    memory, server, _, _ = served
    token, _ = memory.keys.create(tenant="acme", user="ana")
    other, _ = memory.keys.create(tenant="acme", user="bob")
    answers = [post(server, "/v1/get", token, json={"key": "k"}) for _ in range(8)]  # a burst of 5 allowed
    limited = [a for a in answers if a.status_code == 429]
    assert limited and limited[0].json()["error"]["code"] == "RATE_LIMITED"
    assert int(limited[0].headers["Retry-After"]) >= 1
    assert post(server, "/v1/get", other, json={"key": "k"}).status_code == 200  # per key


@pytest.mark.parametrize("timeout_s", [1.0])
def test_an_op_past_the_request_timeout_is_answered_504_and_still_drains(served):
    memory, server, _, embedder = served
    token, _ = memory.keys.create(tenant="acme", user="ana")
    memory.for_run(Identity(tenant="acme", user="ana")).set("k", "something to find")
    memory.flush()
    embedder.gate.clear()  # the next embed waits: recall outlives the 1 s timeout
    answer = post(server, "/v1/recall", token, json={"query": "anything"})
    assert answer.status_code == 504 and answer.json()["error"]["code"] == "REQUEST_TIMEOUT"
    assert answer.json()["error"]["details"]["started"] is True
    state = server.app.state.service
    assert state.running == 1  # the op's thread is still running
    embedder.gate.set()
    assert state.drain() is True and state.running == 0


def test_health_metrics_and_the_schema_are_published(served):
    memory, server, _, _ = served
    token, _ = memory.keys.create(tenant="acme", user="ana")
    with RemoteMemory(server.url, token) as remote:
        tool = remote.tool()
        tool.set("k", "v")
        tool.get("k")
        tool.recall("v")
        assert remote.health()["status"] == "ok"
        tool.set("k2", "v2")  # no search follows: the upkeep writes it
        deadline = time.monotonic() + 10
        while memory.index_queued() and time.monotonic() < deadline:
            time.sleep(0.01)
    text = httpx.get(f"{server.url}/metrics").text
    assert 'memcore_requests_total{op="set",status="200"} 2' in text
    assert 'memcore_request_seconds_count{op="recall"} 1' in text
    assert 'memcore_request_seconds_bucket{op="get",le="+Inf"} 1' in text
    assert "memcore_index_queue " in text and "memcore_index_unindexed_rows " in text
    assert "memcore_index_unsettled_rows " in text and "memcore_index_unsettled_appends " in text
    assert "# TYPE memcore_index_upkeep_rounds_total counter" in text
    assert "memcore_index_upkeep_failures_total 0" in text
    assert float(text.split("memcore_index_upkeep_rounds_total ")[-1].split()[0]) >= 1
    schema = httpx.get(f"{server.url}/v1/openapi.json").json()
    assert {f"/v1/{name}" for name in TOOL_OPS} <= set(schema["paths"])
    body = schema["paths"]["/v1/set"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert {"key", "value", "valid_at", "scope"} <= set(body["properties"]) and "tenant" not in body["properties"]


def test_the_access_log_names_the_op_and_the_key_never_a_value(served, caplog):
    memory, server, _, _ = served
    token, record = memory.keys.create(tenant="acme", user="ana")
    with caplog.at_level(logging.INFO, logger="memory_core.service.access"):
        with RemoteMemory(server.url, token) as remote:
            remote.tool().set("diagnosis", "a very private value")
        sets: list[dict] = []
        deadline = time.monotonic() + 5
        while not sets and time.monotonic() < deadline:  # the line is written once the answer is sent
            lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "memory_core.service.access"]
            sets = [line for line in lines if line["op"] == "set"]
            time.sleep(0.01)
    assert sets and sets[0]["key_id"] == record.key_id and sets[0]["status"] == 200
    assert sets[0]["ms"] > 0 and sets[0]["tenant"] == "acme"
    assert "a very private value" not in caplog.text and "diagnosis" not in caplog.text


def test_session_run_and_model_label_provenance_but_never_pick_the_owner(served):
    memory, server, _, _ = served
    token, _ = memory.keys.create(tenant="acme", user="ana", agent="helper")
    with RemoteMemory(server.url, token, session="s9", run="r9", model="m9") as remote:
        written = remote.tool().set("k", "v").version
    assert (written.provenance.session, written.provenance.run, written.provenance.model) == ("s9", "r9", "m9")
    assert (written.tenant, written.owner_id, written.provenance.origin) == ("acme", "ana", "memcore.service")
    local = memory.for_run(Identity(tenant="acme", user="ana")).get("k")
    assert local.id == written.id


def test_each_request_is_labelled_by_its_own_headers_and_a_revoked_key_is_refused_after(served):
    """The service keeps a tool per key and labels: a key's requests with other labels write
    their own provenance, and revoking the key refuses its next request all the same."""
    memory, server, _, _ = served
    token, record = memory.keys.create(tenant="acme", user="ana", agent="helper")
    written = {}
    for session in ("s1", "s2", "s1"):
        with RemoteMemory(server.url, token, session=session, run=f"run-{session}") as remote:
            written[session] = remote.tool().set(f"k-{session}", session).version.provenance
    assert {(p.session, p.run) for p in written.values()} == {("s1", "run-s1"), ("s2", "run-s2")}
    memory.keys.revoke(record.key_id)
    with RemoteMemory(server.url, token, session="s1", run="run-s1") as remote:
        with pytest.raises(Unauthenticated):
            remote.call("/v1/get", {"key": "k-s1"})


def test_the_index_is_written_between_requests(served):
    """The service's upkeep thread writes a set's index rows without waiting for a search, and a
    stop with upkeep disabled still leaves the index complete (the drain writes the queue)."""
    memory, server, _, _ = served
    token, _ = memory.keys.create(tenant="acme", user="ana")
    with RemoteMemory(server.url, token) as remote:
        remote.tool().set("city", "lives in Lisbon")
        deadline = time.monotonic() + 10
        while memory.index_queued() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert memory.index_queued() == 0
        assert [h.key for h in remote.tool().recall("Lisbon", recipe="bm25_only").hits] == ["city"]


def test_without_upkeep_the_queue_waits_for_a_search_or_the_stop(tmp_path):
    memory = Memory.open(tmp_path / "home", clock=FixedClock(T0), embedder=HashingEmbedder())
    token, _ = memory.keys.create(tenant="acme", user="ana")
    with ThreadedServer(memory, ServiceSettings(upkeep_interval_s=0)) as server:
        with RemoteMemory(server.url, token) as remote:
            remote.tool().set("city", "lives in Lisbon")
            time.sleep(0.2)
            assert memory.index_queued() == 1
    assert memory.index_queued() == 0  # the stop's drain wrote it
    memory.close()


class _Home:
    """What ``warm`` uses of a Memory, recording the calls."""

    embedder = HashingEmbedder()

    def __init__(self) -> None:
        self.calls: list[str] = []

    def flush(self) -> int:
        self.calls.append("flush")
        return 0

    def prewarm_index(self, *, vector_budget_bytes: int = 0) -> int:
        self.calls.append(f"prewarm_index {vector_budget_bytes}")
        return 0


def test_the_service_loads_the_index_before_it_listens_unless_told_not_to():
    from memory_core.service.server import warm

    default, bare = _Home(), _Home()
    warm(default, vector_budget_bytes=1024)
    warm(bare, prewarm_index=False)
    assert default.calls == ["flush", "prewarm_index 1024"] and bare.calls == ["flush"]
    assert ServiceSettings().prewarm_index is True and ServiceSettings().resident_vector_bytes == 256 * 2**20
