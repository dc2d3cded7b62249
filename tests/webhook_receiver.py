"""A webhook receiver on 127.0.0.1 for the tests: it records every POST (its headers and body),
answers 500 to the first ``fail_first`` of them, can hold each one ``delay_s`` seconds, and can
be stopped and started again on the same port (a receiver that is down)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from memory_core.webhooks import SIGNATURE_HEADER, verify


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    status: int
    at: float
    done: float = 0.0

    @property
    def event(self) -> dict[str, Any]:
        return json.loads(self.body)


@dataclass
class Receiver:
    fail_first: int = 0
    delay_s: float = 0.0
    received: list[Received] = field(default_factory=list)
    port: int = 0
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: dict[str, int] = field(default_factory=dict)
    overlaps: int = 0  # POSTs of one event that were being handled at the same time

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> "Receiver":
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the standard library's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                event_id = self.headers.get("X-Memcore-Event-Id", "")
                with receiver._lock:
                    receiver.in_flight[event_id] = receiver.in_flight.get(event_id, 0) + 1
                    receiver.overlaps += receiver.in_flight[event_id] > 1
                    failing = len(receiver.received) < receiver.fail_first
                    got = Received(dict(self.headers), body, 500 if failing else 200, time.monotonic())
                    receiver.received.append(got)
                if receiver.delay_s:
                    time.sleep(receiver.delay_s)
                with receiver._lock:
                    receiver.in_flight[event_id] -= 1
                got.done = time.monotonic()
                self.send_response(got.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True  # a held POST never keeps a test waiting
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def delivered(self) -> list[Received]:
        return [r for r in self.received if r.status == 200]

    def verified(self, secret: str) -> bool:
        now = int(time.time())
        return all(verify(secret, r.headers[SIGNATURE_HEADER], r.body, now, tolerance_s=10**10) for r in self.received)
