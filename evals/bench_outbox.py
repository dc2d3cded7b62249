"""The change webhooks' cost: `python -m evals.bench_outbox [--points 600] [--events 300]`.

Outbox: point writes (no embedder: the outbox's cost is in the write's DuckDB transaction) into
two homes, interleaved one write each: the tenant of one has a webhook (every write appends an
outbox row in its transaction), the other's has none. Ratio: with / without.

Delivery: ``--events`` outbox events delivered to a receiver on 127.0.0.1 by delivery passes,
against a baseline measured in the same run: as many bare signed POSTs to the same receiver.

Ratios are printed beside the times: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from memory_core import Identity, Memory
from memory_core.webhooks import signed_headers


class _Ok(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - the standard library's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return None


def outbox_cost(folder: Path, n: int) -> dict[str, float]:
    with Memory.open(folder / "hooked") as hooked, Memory.open(folder / "plain") as plain:
        hooked.webhook_register("bench", "http://127.0.0.1:9/never-delivered")
        tools = {
            name: m.for_run(Identity(tenant="bench", user="u")) for name, m in (("with", hooked), ("without", plain))
        }
        times: dict[str, list[float]] = {"with": [], "without": []}
        for i in range(n):
            for name in ("without", "with") if i % 2 else ("with", "without"):
                started = time.perf_counter()
                tools[name].set(f"k{i % 50}", f"value {i}")
                times[name].append((time.perf_counter() - started) * 1000)
        rows = len(hooked.store.webhooks.outbox())
    p50 = {name: statistics.median(t) for name, t in times.items()}
    return {
        "with_p50_ms": p50["with"],
        "without_p50_ms": p50["without"],
        "ratio": p50["with"] / p50["without"],
        "outbox_rows": rows,
    }


def delivery_rate(folder: Path, events: int) -> dict[str, float]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        with Memory.open(folder / "deliver") as memory:
            memory.webhook_register("bench", url)
            tool = memory.for_run(Identity(tenant="bench", user="u"))
            for i in range(events):
                tool.set(f"k{i}", f"value {i}")
            started = time.perf_counter()
            delivered = 0
            while delivered < events:
                delivered += memory.deliver_webhooks(worker="bench")["delivered"]
            passes_s = time.perf_counter() - started
        body = b'{"event_id":"x","type":"memory.written"}'
        started = time.perf_counter()
        for i in range(events):
            headers = signed_headers("s" * 32, int(time.time()), body, f"e{i}", "memory.written")
            request = urllib.request.Request(url, data=body, headers=headers, method="POST")
            with urllib.request.urlopen(request, timeout=5) as response:
                response.read()
        bare_s = time.perf_counter() - started
    finally:
        server.shutdown()
        server.server_close()
    return {
        "events": events,
        "seconds": passes_s,
        "per_s": events / passes_s,
        "bare_s": bare_s,
        "ratio": passes_s / bare_s,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=600)
    parser.add_argument("--events", type=int, default=300)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memcore-bench-outbox-") as tmp:
        cost = outbox_cost(Path(tmp), args.points)
        rate = delivery_rate(Path(tmp), args.events)
    print(
        f"point write p50 with a webhook {cost['with_p50_ms']:.2f} ms, without {cost['without_p50_ms']:.2f} ms: "
        f"{cost['ratio']:.2f}x ({cost['outbox_rows']:.0f} outbox rows)"
    )
    print(
        f"delivery: {rate['events']:.0f} events in {rate['seconds']:.2f} s = {rate['per_s']:.0f}/s; "
        f"bare signed POSTs to the same receiver {rate['bare_s']:.2f} s: {rate['ratio']:.2f}x"
    )


if __name__ == "__main__":
    main()
