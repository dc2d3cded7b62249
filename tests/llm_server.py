"""A small OpenAI-compatible chat server on 127.0.0.1 for tests: real HTTP, scripted answers.

Each request takes the next step of the script (the last step repeats): a dict answered as the
model's JSON content, or one of the failure steps below. Requests are recorded.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


def ok(content: Any, *, prompt_tokens: int = 100, completion_tokens: int = 20) -> dict:
    return {"kind": "ok", "content": content, "usage": (prompt_tokens, completion_tokens)}


def status(code: int, retry_after: float | None = None) -> dict:
    return {"kind": "status", "code": code, "retry_after": retry_after}


MALFORMED = {"kind": "raw", "content": '{"facts": [ {"subject": "ana",'}  # cut JSON
TRUNCATED = {"kind": "truncated"}
SLOW = {"kind": "slow"}  # answers after the client's timeout
DROP = {"kind": "drop"}  # closes the connection without an answer


class ScriptedLLM:
    def __init__(self) -> None:
        self.script: list[dict] = []
        self.requests: list[dict] = []
        self.responder: Callable[[dict], dict] | None = None  # computes the step from the request
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append(body)
                    if server.responder is not None:
                        step = server.responder(body)
                    else:
                        step = server.script.pop(0) if len(server.script) > 1 else server.script[0]
                kind = step["kind"]
                if kind == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if kind == "slow":
                    time.sleep(1.5)
                    step = {"kind": "ok", "content": {}, "usage": (1, 1)}
                if kind == "status":
                    payload = json.dumps({"error": {"message": f"scripted {step['code']}", "type": "test"}}).encode()
                    self.send_response(step["code"])
                    if step.get("retry_after") is not None:
                        self.send_header("Retry-After", str(step["retry_after"]))
                    self._send(payload)
                    return
                content = json.dumps(step["content"]) if kind == "ok" else step.get("content", "{}")
                finish = "length" if kind == "truncated" else "stop"
                usage = step.get("usage", (50, 10))
                payload = json.dumps(
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": content}}
                        ],
                        "usage": {
                            "prompt_tokens": usage[0],
                            "completion_tokens": usage[1],
                            "total_tokens": usage[0] + usage[1],
                        },
                    }
                ).encode()
                self.send_response(200)
                self._send(payload)

            def _send(self, payload: bytes) -> None:
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "ScriptedLLM":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
