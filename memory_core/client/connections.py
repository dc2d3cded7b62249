"""The remote client's wire: HTTP/1.1 keep-alive connections of the standard library, pooled.

Each call of ``RemoteMemory`` takes an idle connection (or opens one), sends one request and reads
the whole answer, then puts the connection back; threads sharing a ``RemoteMemory`` each use
their own connection at a time. Why not ``httpx.Client``: with 16 client processes asking a bare
server once a second each, a request cost 1.80-1.87 ms at p50 through ``httpx`` and 0.97-1.02 ms
through ``http.client``, the same server and payloads; an ``httpx`` client over an ``http.client``
transport cost 1.63-1.81 ms, so the cost is ``httpx``'s own request and response layers, not its
connection pool (docs/benchmarks.md, "The client's wire"). ``RemoteMemory(transport=...)`` still
sends through ``httpx`` (``HttpxWire``): a proxy, a mock transport, HTTP/2.

A connection the server closed while it sat idle (its keep-alive ran out, the service restarted)
reads as ready with nothing to read; it is dropped before use, so a request is never sent twice.
"""

from __future__ import annotations

import http.client
import json
import select
import threading
from typing import Any, Mapping, NamedTuple
from urllib.parse import urlencode, urlsplit

# Idle connections kept per ``RemoteMemory``; past it a returned connection is closed.
KEPT_IDLE = 16


class Answer(NamedTuple):
    status: int
    body: bytes


class Unanswered(Exception):
    """No answer came: the service could not be reached, closed the connection, or ran out of
    time (``timed_out``). ``reason`` names what the socket or the HTTP parser raised."""

    def __init__(self, reason: str, *, timed_out: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.timed_out = reason, timed_out


def json_body(payload: Mapping[str, Any] | None) -> bytes:
    """A request's JSON body, written as ``httpx`` writes one (compact, UTF-8, no NaN)."""
    return json.dumps(dict(payload or {}), ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def query_string(params: Mapping[str, Any] | None) -> str:
    """``?a=1&b=true`` for a GET's arguments (booleans as JSON spells them), or nothing."""
    if not params:
        return ""
    spelled = {
        k: "true" if v is True else "false" if v is False else "" if v is None else str(v) for k, v in params.items()
    }
    return "?" + urlencode(spelled)


class ConnectionPool:
    """Keep-alive connections to one service (``url``), each request with ``headers``."""

    def __init__(self, url: str, headers: Mapping[str, str], timeout: float) -> None:
        parts = urlsplit(url)
        self._connection_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self._host, self._port = parts.hostname or "", parts.port
        self._prefix = parts.path.rstrip("/")
        self._headers = dict(headers)
        self._json_headers = {**self._headers, "Content-Type": "application/json"}  # a request with a body
        self._timeout = timeout
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._closed = False

    def request(self, method: str, path: str, body: bytes | None = None) -> Answer:
        """Send one request (``path`` with its query) and read its whole answer."""
        connection = self._take()
        headers = self._headers if body is None else self._json_headers
        try:
            connection.request(method, self._prefix + path, body=body, headers=headers)
            response = connection.getresponse()
            answer = Answer(response.status, response.read())
        except TimeoutError as exc:
            connection.close()
            raise Unanswered(type(exc).__name__, timed_out=True) from None
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            raise Unanswered(type(exc).__name__) from None
        if response.will_close:
            connection.close()
        else:
            self._give_back(connection)
        return answer

    def _take(self) -> http.client.HTTPConnection:
        with self._lock:
            while self._idle:
                connection = self._idle.pop()
                if _still_open(connection):
                    return connection
                connection.close()
        return self._connection_type(self._host, self._port, timeout=self._timeout)

    def _give_back(self, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < KEPT_IDLE:
                self._idle.append(connection)
                return
        connection.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


def _still_open(connection: http.client.HTTPConnection) -> bool:
    """Can an idle connection carry a request? Not when its socket is gone or reads as ready:
    between answers the server sends nothing, so ready means it closed its end (or broke the
    protocol)."""
    sock = connection.sock
    if sock is None:
        return True  # never connected: it connects on its first request
    try:
        if hasattr(select, "poll"):  # no descriptor limit, unlike select()
            ready = select.poll()
            ready.register(sock, select.POLLIN)
            return not ready.poll(0)
        return not select.select([sock], [], [], 0)[0]
    except (OSError, ValueError):
        return False


class HttpxWire:
    """The same calls through an ``httpx`` client on a caller's transport."""

    def __init__(self, url: str, headers: Mapping[str, str], timeout: float, transport: Any) -> None:
        import httpx

        self._httpx = httpx
        self._client = httpx.Client(base_url=url, headers=dict(headers), timeout=timeout, transport=transport)

    def request(self, method: str, path: str, body: bytes | None = None) -> Answer:
        headers = None if body is None else {"Content-Type": "application/json"}
        try:
            response = self._client.request(method, path, content=body, headers=headers)
        except self._httpx.TimeoutException as exc:
            raise Unanswered(type(exc).__name__, timed_out=True) from None
        except self._httpx.HTTPError as exc:
            raise Unanswered(type(exc).__name__) from None
        return Answer(response.status_code, response.content)

    def close(self) -> None:
        self._client.close()
