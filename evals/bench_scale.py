"""The three service shapes side by side: `python -m evals.bench_scale [--seconds 5] [--clients 1,2,4]`.

Shapes (DESIGN.md, "Scale-out path"), each a real ``serve`` process (or two) on 127.0.0.1, port 0:

- ``duckdb``: one service owning a DuckDB home (shape 2);
- ``pg x1``: one service over a PostgreSQL authority (shape 3 with one replica);
- ``pg x2``: two services over ONE PostgreSQL authority, each with its own home folder (its
  Lance index) and the same signing key; client ``i`` talks to replica ``i % 2``.

For each shape and each client count N (``--clients``), two cells of ``--seconds`` each, closed
loops (a client sends its next request when the last is answered): N client PROCESSES (spawned
once, kept for the whole run; each its own ``RemoteMemory``) writing (``set`` of one of 100 keys
of the client's own user, made-up words so no peer verdict fires), then N searching (``recall``
of made-up words, k=10, in the client's namespace). Printed per cell: requests per second, p50 and
p95 latency as the client sees it, and the CPU the service processes used (cores busy).

Baselines, same run: every shape's throughput is quoted against the DuckDB service at the same
client count, and the point-write p50 of PostgreSQL against DuckDB twice: through the services
(1 client) and in-process (``Memory.open`` over each store, ``--points`` writes interleaved).

The embedder is the hashing one: this measures the stores and the service, not a model. The
PostgreSQL schemas are made fresh (``bench_scale_<hex>``) and dropped at the end; ``--pg`` names
the server (default the loopback one). Output: Markdown on stdout (and ``--out`` as JSON).
Results: docs/benchmarks.md, "Scale-out shapes (bench_scale)".
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import random
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

# Only light imports at module level: the client processes are spawned and import this module.

DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"
KEYS_PER_CLIENT = 100
SERVE = (
    "import json, sys; from memory_core.service import serve; "
    "serve(sys.argv[1], port=0, embedder='hashing', access_log=False, **json.loads(sys.argv[2]))"
)


def words(rng: random.Random, n: int = 3) -> str:
    return " ".join("".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(4)) for _ in range(n))


# -- the client processes ---------------------------------------------------------------------


def _client(inbox: Any, outbox: Any) -> None:
    """One client process: runs the cells it is sent until told to stop (None)."""
    from memory_core.client import RemoteMemory

    while (cell := inbox.get()) is not None:
        rng = random.Random(cell["seed"])
        latencies: list[float] = []
        errors, first_error = 0, None
        with RemoteMemory(cell["url"], cell["token"], timeout=60) as remote:
            tool = remote.tool()
            time.sleep(max(0.0, cell["start_at"] - time.time()))
            end = time.time() + cell["seconds"]
            n = rng.randrange(KEYS_PER_CLIENT)
            while time.time() < end:
                started = time.perf_counter()
                try:
                    if cell["mode"] == "write":
                        tool.set(f"k{n % KEYS_PER_CLIENT}", words(rng))
                    else:
                        tool.recall(words(rng, 2), k=10)
                except Exception as exc:  # noqa: BLE001 - counted and named in the report
                    errors += 1
                    first_error = first_error or f"{type(exc).__name__}: {exc}"
                    continue
                latencies.append((time.perf_counter() - started) * 1000)
                n += 1
        outbox.put({"latencies": latencies, "errors": errors, "first_error": first_error})


class Clients:
    """``n`` spawned client processes, each fed cells through its own queue."""

    def __init__(self, n: int) -> None:
        context = mp.get_context("spawn")
        self.outbox = context.Queue()
        self.inboxes = [context.Queue() for _ in range(n)]
        self.procs = [context.Process(target=_client, args=(q, self.outbox), daemon=True) for q in self.inboxes]
        for p in self.procs:
            p.start()

    def run(
        self, urls: list[str], tokens: list[str], mode: str, n: int, seconds: float, cpu: Any = lambda: 0.0
    ) -> dict[str, Any]:
        """One cell; ``cpu()`` (the services' CPU seconds) is read as it starts and as it ends."""
        start_at = time.time() + 1.0  # every client connected and waiting by then
        for i in range(n):
            self.inboxes[i].put(
                {
                    "url": urls[i % len(urls)],
                    "token": tokens[i],
                    "mode": mode,
                    "seed": hash((mode, n, i)) & 0xFFFF,
                    "start_at": start_at,
                    "seconds": seconds,
                }
            )
        time.sleep(max(0.0, start_at - time.time()))
        used = cpu()
        results = [self.outbox.get(timeout=seconds + 120) for _ in range(n)]
        used = cpu() - used
        latencies = [x for r in results for x in r["latencies"]]
        return {
            "ops": len(latencies),
            "per_s": len(latencies) / seconds,
            "p50_ms": statistics.median(latencies) if latencies else float("nan"),
            "p95_ms": _pct(latencies, 0.95),
            "errors": sum(r["errors"] for r in results),
            "first_error": next((r["first_error"] for r in results if r["first_error"]), None),
            "service_cores": used / seconds,
        }

    def close(self) -> None:
        for q in self.inboxes:
            q.put(None)
        for p in self.procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- the services -----------------------------------------------------------------------------


class Served:
    """``serve`` in a child process on a free loopback port; SIGTERM to stop."""

    def __init__(self, home: Path, options: dict[str, Any]) -> None:
        self._log = open(home.parent / f"{home.name}.log", "ab")  # noqa: SIM115 - closed by ``stop``
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVE, str(home), json.dumps(options)],
            stdout=subprocess.PIPE,
            stderr=self._log,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)
        line = self.proc.stdout.readline() if ready else b""
        if not line:
            self.stop()
            raise RuntimeError(f"the service over {home} did not start; see {home.name}.log beside it")
        self.url = json.loads(line)["url"]

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self._log.close()


def make_keys(home: Path, options: dict[str, Any], n: int) -> list[str]:
    from memory_core import Memory

    with Memory.open(home, embedder="hashing", **options) as memory:
        return [memory.keys.create(tenant="bench", user=f"u{i}", agent="bench")[0] for i in range(n)]


def run_shape(
    name: str, root: Path, options: dict[str, Any], replicas: int, clients: Clients, counts: list[int], seconds: float
) -> list[dict[str, Any]]:
    tokens = make_keys(root / "keys-home" if options else root / "replica0", options, max(counts))
    services: list[Served] = []
    try:
        services = [Served(root / f"replica{r}", options) for r in range(replicas)]
        urls = [s.url for s in services]
        for mode in ("write", "search"):  # warm up (the index opened, the caches filled): not counted
            clients.run(urls, tokens, mode, max(counts), min(1.0, seconds))
        cells = []
        for mode in ("write", "search"):
            for n in counts:
                cell = clients.run(urls, tokens, mode, n, seconds, cpu=lambda: sum(s.cpu_s() for s in services))
                cells.append({"shape": name, "mode": mode, "clients": n, **cell})
        return cells
    finally:
        for s in services:
            s.stop()


# -- in-process point writes ------------------------------------------------------------------


def point_writes(root: Path, store: str, n: int) -> dict[str, float]:
    """p50 of ``set`` in-process on a DuckDB home and over the PostgreSQL authority, interleaved."""
    from memory_core import Identity, Memory

    rng = random.Random(7)
    times: dict[str, list[float]] = {"duckdb": [], "pg": []}
    with (
        Memory.open(root / "points-duckdb", embedder="hashing") as duck,
        Memory.open(root / "points-pg", embedder="hashing", store=store) as pg,
    ):
        tools = {name: m.for_run(Identity(tenant="bench", user="p")) for name, m in (("duckdb", duck), ("pg", pg))}
        for tool in tools.values():
            tool.set("warm", words(rng))
        for i in range(n):
            for name in ("duckdb", "pg") if i % 2 else ("pg", "duckdb"):
                started = time.perf_counter()
                tools[name].set(f"k{i % 50}", words(rng))
                times[name].append((time.perf_counter() - started) * 1000)
    p50 = {name: statistics.median(t) for name, t in times.items()}
    return {"duckdb_p50_ms": p50["duckdb"], "pg_p50_ms": p50["pg"], "ratio": p50["pg"] / p50["duckdb"]}


# -- the report -------------------------------------------------------------------------------


def knee(cells: list[dict[str, Any]]) -> tuple[int, float]:
    """The client count past which throughput stops rising by 20% or more, and the best rate."""
    ordered = sorted(cells, key=lambda c: c["clients"])
    at = ordered[0]
    for cell in ordered[1:]:
        if cell["per_s"] < 1.2 * at["per_s"]:
            break
        at = cell
    return at["clients"], max(c["per_s"] for c in ordered)


def report(result: dict[str, Any]) -> str:
    cells = result["cells"]
    base = {(c["mode"], c["clients"]): c["per_s"] for c in cells if c["shape"] == "duckdb"}
    lines = [
        f"## Scale-out shapes (bench_scale) — {result['date']}",
        "",
        f"`{result['command']}`; host: {result['host']}; PostgreSQL {result['pg_version']} on the same host; "
        f"hashing embedder; closed loops of {result['seconds']:g} s per cell, client processes on the same host.",
        "",
        "| shape | op | clients | req/s | × duckdb, same clients | p50 ms | p95 ms | service cores busy | errors |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        ratio = c["per_s"] / base[(c["mode"], c["clients"])] if base.get((c["mode"], c["clients"])) else float("nan")
        lines.append(
            f"| {c['shape']} | {c['mode']} | {c['clients']} | {c['per_s']:.1f} | {ratio:.2f} | {c['p50_ms']:.1f} "
            f"| {c['p95_ms']:.1f} | {c['service_cores']:.2f} | {c['errors']} |"
        )
    one = {c["shape"]: c["p50_ms"] for c in cells if c["mode"] == "write" and c["clients"] == min(result["clients"])}
    points = result["points"]
    lines += [
        "",
        f"Point-write p50, PostgreSQL against DuckDB: through the service (1 client) {one['pg x1']:.1f} ms "
        f"vs {one['duckdb']:.1f} ms = **{one['pg x1'] / one['duckdb']:.2f}×**; in-process ({result['points_n']} "
        f"writes each, interleaved) {points['pg_p50_ms']:.2f} ms vs {points['duckdb_p50_ms']:.2f} ms = "
        f"**{points['ratio']:.2f}×**.",
        "",
        "Where each shape stops (the client count past which throughput rises by less than 20%):",
    ]
    most = max(result["clients"])
    for shape in dict.fromkeys(c["shape"] for c in cells):
        for mode in ("write", "search"):
            at, best = knee([c for c in cells if c["shape"] == shape and c["mode"] == mode])
            where = f"still rising at {most} clients (the most measured)" if at == most else f"flat past {at} client(s)"
            lines.append(f"- {shape} {mode}: {best:.1f}/s at best, {where}.")
    rate = {(c["shape"], c["mode"]): c["per_s"] for c in cells if c["clients"] == most}
    two = {mode: rate[("pg x2", mode)] / rate[("pg x1", mode)] for mode in ("write", "search")}
    lines += [
        "",
        f"At {most} clients, two replicas against one: writes {two['write']:.2f}×, searches {two['search']:.2f}×.",
        "",
        "What bounds them: DuckDB admits one process, so shape 2 is one service whatever the load. Over "
        "PostgreSQL every write takes the authority's global write lock (an advisory lock) for its whole "
        "read-decide-commit: that is how each key keeps one total order of versions and the home one audit "
        "chain, and it makes writes one at a time across every replica, so a second replica adds no write "
        "throughput (and each replica replays the other's writes into its own index, which costs it). "
        "Searches read the replica's own Lance index and take no lock: they scale with replicas while the "
        f"host has cores to spare. This host has {os.cpu_count()} cores for the clients, the services and "
        "PostgreSQL together"
        + (
            f": searches gained {two['search']:.2f}× from a second replica, so this run cannot show them "
            "scale (with every process on these cores, the cores are the likely limit); run it where the "
            "replicas have cores of their own."
            if two["search"] < 1.5
            else f"; a second replica served {two['search']:.2f}× the searches."
        ),
    ]
    return "\n".join(lines)


def _drop(server: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as con:
        con.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each measured cell (default 5)")
    parser.add_argument("--clients", default="1,2,4", help="client process counts (default 1,2,4)")
    parser.add_argument("--points", type=int, default=300, help="in-process point writes per store (default 300)")
    parser.add_argument("--pg", default=DEFAULT_PG, help=f"the PostgreSQL server (default {DEFAULT_PG})")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    counts = sorted({int(x) for x in args.clients.split(",")})
    import psycopg

    with psycopg.connect(args.pg, connect_timeout=5) as con:
        pg_version = con.execute("SHOW server_version").fetchone()[0]
    sep = "&" if "?" in args.pg else "?"
    schemas = [f"bench_scale_{uuid.uuid4().hex[:10]}" for _ in range(3)]
    store = [f"{args.pg}{sep}schema={s}" for s in schemas]
    clients = Clients(max(counts))
    try:
        with tempfile.TemporaryDirectory(prefix="memcore-bench-scale-") as tmp:
            root = Path(tmp)
            shapes = [
                ("duckdb", {}, 1),
                ("pg x1", {"store": store[0], "key_dir": str(root / "pg1" / "keys")}, 1),
                ("pg x2", {"store": store[1], "key_dir": str(root / "pg2" / "keys")}, 2),
            ]
            cells = []
            for n, (name, options, replicas) in enumerate(shapes):
                folder = root / f"shape{n}"
                folder.mkdir()
                cells += run_shape(name, folder, options, replicas, clients, counts, args.seconds)
            points = point_writes(root, store[2], args.points)
    finally:
        clients.close()
        for schema in schemas:
            _drop(args.pg, schema)
    result = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "command": "python -m evals.bench_scale " + " ".join(argv if argv is not None else sys.argv[1:]),
        "host": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "pg_version": pg_version,
        "seconds": args.seconds,
        "clients": counts,
        "cells": cells,
        "points": points,
        "points_n": args.points,
    }
    result["markdown"] = report(result)
    print(result["markdown"], flush=True)
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
