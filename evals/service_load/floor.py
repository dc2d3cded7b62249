"""The host's floor for one request: the same HTTP round trip as a ``get`` through the service, to
a bare ASGI app that does nothing (uvicorn with the service's settings, the same body and headers
sent through ``RemoteMemory``'s own wire, ``memory_core.client.connections``), at the same pacing
and client count.
What is left of the service's overhead once the floor is taken out is the memory stack's own
(authentication, JSON and wire forms, the worker thread, the client's argument checks); the floor
itself is the host's: the Python HTTP client and server and the wake-ups of idle processes on
these cores, which no change to the library moves. Only light imports at module level: the client
processes are spawned and import it."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from typing import Any

# A bare app under uvicorn, configured as ``memory_core.service.server.serve`` configures it (its
# default HTTP and event-loop implementations, keep-alive 30 s), announcing its URL on stdout.
BARE = """
import json, sys, uvicorn
from memory_core.service.server import bind
ANSWER = sys.argv[1].encode()

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": ANSWER})

sock = bind("127.0.0.1", 0)
print(json.dumps({"url": f"http://127.0.0.1:{sock.getsockname()[1]}"}), flush=True)
config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=30)
uvicorn.Server(config).run(sockets=[sock])
"""

# About the size of a get's answer for one of the benchmark's facts.
ANSWER = json.dumps({"result": {"key": "fact0", "value": "x" * 120, "valid_at": "2026-01-01T00:00:00Z"}})


class BareServer:
    """The bare app in a subprocess; its URL; stopped with SIGTERM."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", BARE, ANSWER], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.url = json.loads(self.proc.stdout.readline())["url"]
        threading.Thread(target=lambda: self.proc.stdout.read(), daemon=True).start()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def floor_loop(url: str, token: str, plan: dict, seconds: float, go: Any = None) -> dict[str, Any]:
    """``client_loop``'s pacing and timing with every op a get-shaped POST to the bare app: its
    result has ``client_loop``'s fields, so ``clients.combine`` reads it. ``plan["wire"]``:
    ``client`` (``RemoteMemory``'s own, the default) or ``httpx`` (``RemoteMemory(transport=)``'s)."""
    from memory_core.client.connections import ConnectionPool, HttpxWire, json_body

    latency: dict[str, list[float]] = {"get": [], "set": [], "recall": []}
    begun: dict[str, list[float]] = {"get": [], "set": [], "recall": []}
    late: dict[str, list[float]] = {"get": [], "set": [], "recall": []}
    rate = float(plan.get("rate") or 0.0)
    pace = random.Random(plan["seed"] + 7919)
    errors: dict[str, int] = {}
    headers = {"Authorization": f"Bearer {token}"}
    if plan.get("wire", "client") == "httpx":
        import httpx

        wire: Any = HttpxWire(url, headers, 60, httpx.HTTPTransport())
    else:
        wire = ConnectionPool(url, headers, timeout=60)
    try:
        wire.request("POST", "/v1/get", json_body({"key": "fact0"}))  # the connection opened before the clock
        if go is not None:
            go.wait()
        started, cpu = time.perf_counter(), time.process_time()
        end = started + seconds
        due = started + (pace.expovariate(rate) if rate else 0.0)
        n = 0
        while True:
            now = time.perf_counter()
            if now >= end or (rate and due >= end):
                break
            if rate and due > now:
                time.sleep(due - now)
            n += 1
            t0 = due if rate else time.perf_counter()
            late["get"].append((time.perf_counter() - t0) * 1000)
            answer = wire.request("POST", "/v1/get", json_body({"key": f"fact{n % 100}"}))
            json.loads(answer.body)
            latency["get"].append((time.perf_counter() - t0) * 1000)
            begun["get"].append(t0 - started)
            if answer.status != 200:
                errors[str(answer.status)] = errors.get(str(answer.status), 0) + 1
            if rate:
                due += pace.expovariate(rate)
    finally:
        wire.close()
    return {
        "client": plan["client"],
        "latency_ms": latency,
        "begun_s": begun,
        "late_ms": late,
        "errors": errors,
        "verdicts": {},
        "checks": {},
        "acked": {},
        "wall_s": time.perf_counter() - started,
        "cpu_s": time.process_time() - cpu,
    }
