"""The remote client's wire (``memory_core.client.connections``) against real HTTP servers on
127.0.0.1: keep-alive connections reused and shared by threads, a connection the server closed
while idle never written to, a URL's path prefix, a timeout and an unreachable service answered
``SERVICE_UNAVAILABLE``, and the ``httpx`` transport that ``RemoteMemory(transport=...)`` takes."""

from __future__ import annotations

import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from memory_core.client import RemoteMemory
from memory_core.client.connections import KEPT_IDLE, ConnectionPool, json_body, query_string
from memory_core.errors import NotFound, ServiceUnavailable

WHOAMI = {
    "tenant": "acme",
    "user": "ana",
    "agent": "bench",
    "memory_scopes": ["user"],
    "sql_scopes": [],
    "admin": False,
}


class Recorder(ThreadingHTTPServer):
    """A server that answers every request ``{"result": <what it was asked>}`` and records each
    request's path, body and connection; with ``close_after``, it closes each connection after
    its answer without saying so (as a server whose keep-alive ran out does)."""

    daemon_threads = True

    def __init__(self, *, close_after: bool = False, delay_s: float = 0.0) -> None:
        self.seen: list[tuple[str, str, bytes, int]] = []
        self.connections = 0
        self.close_after, self.delay_s = close_after, delay_s
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request, client_address) -> None:
        pass  # a client that gave up (the timeout test) leaves the answer nowhere to go

    def process_request_thread(self, request, client_address):  # counts each connection
        with self.lock:
            self.connections += 1
        super().process_request_thread(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def _answer(self) -> None:
        server = self.server
        assert isinstance(server, Recorder)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with server.lock:
            server.seen.append((self.command, self.path, body, id(self.connection)))
        time.sleep(server.delay_s)
        result = WHOAMI if self.path.endswith("/v1/whoami") else {"path": self.path, "body": body.decode()}
        payload = json.dumps({"result": result}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()
        if server.close_after:
            self.close_connection = True

    do_GET = do_POST = _answer


@pytest.fixture
def recorder(request):
    servers = []

    def start(**kw) -> Recorder:
        server = Recorder(**kw)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_one_connection_carries_every_call_of_a_thread(recorder):
    server = recorder()
    with RemoteMemory(server.url, "k") as remote:
        answers = [remote.call("/v1/get", {"key": f"k{i}"}) for i in range(20)]
    assert [json.loads(a["body"]) for a in answers] == [{"key": f"k{i}"} for i in range(20)]
    assert server.connections == 1
    assert len({conn for *_, conn in server.seen}) == 1


def test_threads_sharing_a_client_each_use_a_connection_at_a_time(recorder):
    server = recorder(delay_s=0.005)
    with RemoteMemory(server.url, "k") as remote:
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda i: remote.call("/v1/get", {"key": f"k{i}"}), range(200)))
        assert len(remote._wire._idle) <= KEPT_IDLE
    # every answer is its own request's: no two threads read one connection's answers
    assert [json.loads(a["body"])["key"] for a in answers] == [f"k{i}" for i in range(200)]
    assert 1 < server.connections <= 8


def test_a_connection_the_server_closed_while_idle_is_not_written_to(recorder):
    """Each write is sent once: the closed connection is dropped before use, not retried after."""
    server = recorder(close_after=True)
    with RemoteMemory(server.url, "k") as remote:
        for i in range(5):
            assert json.loads(remote.call("/v1/set", {"key": "k", "value": i})["body"])["value"] == i
            time.sleep(0.05)  # the server's close reaches the client's idle connection
    assert [json.loads(body)["value"] for _, _, body, _ in server.seen] == [0, 1, 2, 3, 4]
    assert server.connections == 5


def test_a_url_path_prefix_and_a_get_query_are_kept(recorder):
    server = recorder()
    with RemoteMemory(server.url + "/memory/", "k") as remote:
        remote.call("/v1/keys", {"tenant": "acme corp", "admin": True, "label": None}, method="GET")
        remote.call("/v1/whoami", method="GET")
    assert [(m, p) for m, p, _, _ in server.seen] == [
        ("GET", "/memory/v1/keys?tenant=acme+corp&admin=true&label="),
        ("GET", "/memory/v1/whoami"),
    ]
    params = {"admin": False, "n": 3, "q": "a&b"}
    assert query_string(params) == "?" + str(httpx.QueryParams(params)) == "?admin=false&n=3&q=a%26b"


def test_a_body_is_written_as_httpx_writes_json(recorder):
    payload = {"key": "café", "value": [1, 2.5, None]}
    assert json_body(payload) == httpx.Request("POST", "http://x", json=payload).content
    with pytest.raises(ValueError):
        json_body({"value": float("nan")})


def test_a_service_that_does_not_answer_in_time_is_unavailable(recorder):
    server = recorder(delay_s=2.0)
    started = time.perf_counter()
    with RemoteMemory(server.url, "k", timeout=0.3) as remote:
        with pytest.raises(ServiceUnavailable, match="did not answer in time") as raised:
            remote.call("/v1/get", {"key": "k"})
    assert raised.value.code == "SERVICE_UNAVAILABLE"
    assert time.perf_counter() - started < 1.5


def test_an_unreachable_service_is_unavailable():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, never listening: refused
        with RemoteMemory(f"http://127.0.0.1:{port}", "k") as remote:
            with pytest.raises(ServiceUnavailable, match="could not be reached"):
                remote.call("/v1/get", {"key": "k"})


def test_a_closed_pool_keeps_no_connection(recorder):
    server = recorder()
    pool = ConnectionPool(server.url, {}, timeout=5)
    pool.request("POST", "/v1/get", json_body({}))
    pool.close()
    pool.request("POST", "/v1/get", json_body({}))  # still answers, on a connection it does not keep
    assert pool._idle == []


def test_an_httpx_transport_sends_every_call_through_httpx():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.url.path, request.headers["authorization"], request.content))
        if request.url.path == "/v1/whoami":
            return httpx.Response(200, json={"result": WHOAMI})
        return httpx.Response(404, json={"error": {"code": "NOT_FOUND", "message": "no such fact", "status": 404}})

    with RemoteMemory("http://memory.test", "secret", transport=httpx.MockTransport(handler)) as remote:
        tool = remote.tool()
        with pytest.raises(NotFound):
            remote.call("/v1/history", {"key": "k"})
    assert tool.identity.tenant == "acme"
    assert seen[0][:3] == ("GET", "/v1/whoami", "Bearer secret")
    assert seen[1] == ("POST", "/v1/history", "Bearer secret", b'{"key":"k"}')

    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with RemoteMemory("http://memory.test", "secret", transport=httpx.MockTransport(refused)) as remote:
        with pytest.raises(ServiceUnavailable, match="ConnectError"):
            remote.call("/v1/get", {"key": "k"})
