"""The client pools that run ``loop.client_loop`` at once: threads of this process on in-process
tools (the baselines), and HTTP clients through ``RemoteMemory``, as spawned processes (so the
clients' GIL is not the server's) or as threads; all start together on one event. Also the
warm-up that precedes every run, in-process or through the service, and ``combine``: the
clients' figures together (percentiles per op, throughput, errors, the acknowledged writes).
Only light imports at module level: the client processes are spawned and import it."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

from evals.service_load.home import IDENTITIES
from evals.service_load.loop import OPS, client_loop, client_plan


def _client_process(
    url: str, token: str, plan: dict, seconds: float, ready: Any, go: Any, results: Any, floor: bool = False
) -> None:
    """One HTTP client in a process of its own (so the clients' GIL is not the server's); with
    ``floor``, the bare round trip's loop (``floor.floor_loop``) instead of the tool's."""
    try:
        if floor:
            from evals.service_load.floor import floor_loop

            ready.put(plan["client"])
            results.put(floor_loop(url, token, plan, seconds, go))
            return
        from memory_core.client import RemoteMemory

        with RemoteMemory(url, token) as remote:
            tool = remote.tool()
            ready.put(plan["client"])
            results.put(client_loop(tool, plan, seconds, go))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the run
        ready.put(plan["client"])
        results.put({"client": plan["client"], "fatal": f"{type(exc).__name__}: {exc}"})


def run_in_process(memory: Any, keys: list[dict], plans: list[dict], seconds: float, threads: int) -> dict:
    """The loop on in-process tools, ``threads`` at once (threads of this process)."""
    from memory_core import Identity

    go = threading.Event()
    results: list[dict] = [None] * threads  # type: ignore[list-item]

    def one(i: int) -> None:
        spec = keys[i]
        tool = memory.for_run(Identity(tenant=spec["tenant"], user=spec["user"], agent="bench"), origin="bench")
        results[i] = client_loop(tool, plans[i], seconds, go)

    workers = [threading.Thread(target=one, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    cpu = time.process_time()
    go.set()
    for w in workers:
        w.join()
    out = combine(results, seconds)
    out["process_cpu_s"] = time.process_time() - cpu  # the clients and the library alike
    return out


def run_http(
    url: str, keys: list[dict], plans: list[dict], seconds: float, clients: int, mode: str, *, floor: bool = False
) -> dict:
    """The loop through the service: ``clients`` processes (or threads of this process). With
    ``floor``, ``url`` is the bare app and the clients, always processes, send get-shaped
    requests only."""
    if mode == "thread" and not floor:
        from memory_core.client import RemoteMemory

        go = threading.Event()
        out: list[dict] = [None] * clients  # type: ignore[list-item]
        remotes = [RemoteMemory(url, keys[i]["token"]) for i in range(clients)]
        tools = [r.tool() for r in remotes]

        def one(i: int) -> None:
            out[i] = client_loop(tools[i], plans[i], seconds, go)

        workers = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
        for w in workers:
            w.start()
        go.set()
        for w in workers:
            w.join()
        for r in remotes:
            r.close()
        return combine(out, seconds)

    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    ready, results, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [
        ctx.Process(
            target=_client_process,
            args=(url, keys[i]["token"], plans[i], seconds, ready, go, results, floor),
            daemon=True,
        )
        for i in range(clients)
    ]
    for p in procs:
        p.start()
    try:
        for _ in range(clients):
            ready.get(timeout=300)
        go.set()
        out = [results.get(timeout=seconds + 300) for _ in range(clients)]
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()
                p.join()
    fatal = [r["fatal"] for r in out if "fatal" in r]
    if fatal:
        raise RuntimeError(f"{len(fatal)} client process(es) failed: {fatal[0]}")
    combined = combine(sorted(out, key=lambda r: r["client"]), seconds)
    combined["clients_cpu_s"] = sum(r["cpu_s"] for r in out)
    return combined


def warm_up(tools: list[Any], clients: int, per_user: list[int], mix: dict, seed: int, seconds: float) -> dict:
    """The same warm-up before every run, in-process or through the service: each identity's first
    get, recall and (dry-run) set: its namespace cache, the index, the embedder, and the value
    vectors its writes' peer check compares with, which the first write in a namespace embeds
    (about a second at 6,000 facts: left cold, the sixteen of them filled the loaded runs' first
    seconds). Then the loop for ``seconds`` on the first client. Its writes are checked with the
    run's; the dry runs write nothing."""
    from memory_core.errors import MemcoreError

    errors: Counter[str] = Counter()
    for tool in tools[:IDENTITIES]:
        try:
            tool.get("fact0")
            tool.recall("warm up", k=10)
            tool.set("warm-up", "a value to warm the peer check with", dry_run=True)
        except MemcoreError as exc:
            errors[exc.code] += 1
    plan = client_plan(0, clients, per_user, f"warm{seed}", mix, seed)
    out = combine([client_loop(tools[0], plan, seconds)], seconds)
    out["errors"] = dict(Counter(out["errors"]) + errors)
    out["error_count"] = sum(out["errors"].values())
    return out


def combine(
    results: list[dict], seconds: float, window: float | None = None, wall: float | None = None
) -> dict[str, Any]:
    """The clients' figures together; ``window``: only the ops begun in the first ``window`` s;
    ``wall``: the seconds the results took (blocks run apart: the sum of theirs), else the
    longest client's."""
    import numpy as np

    from evals.metrics import quantile_interval

    latency = {
        op: [
            v for r in results for v, at in zip(r["latency_ms"][op], r["begun_s"][op]) if window is None or at < window
        ]
        for op in OPS
    }
    late = {
        op: [v for r in results for v, at in zip(r["late_ms"][op], r["begun_s"][op]) if window is None or at < window]
        for op in OPS
    }
    errors: Counter[str] = Counter()
    verdicts: Counter[str] = Counter()
    checks: Counter[str] = Counter()
    for r in results:
        errors.update(r["errors"])
        verdicts.update(r["verdicts"])
        checks.update(r["checks"])
    if wall is None:
        wall = max(r["wall_s"] for r in results)
    if window is not None:
        wall = min(wall, window)
    ops = sum(len(v) for v in latency.values())
    per_op = {}
    for op, values in latency.items():
        if values:
            arr = np.asarray(values)
            per_op[op] = {
                "n": len(values),
                "p50_ms": float(np.percentile(arr, 50)),
                "p95_ms": float(np.percentile(arr, 95)),
                # Where the true p95 lies (95%): a few hundred ops make a wide interval.
                "p95_interval_ms": quantile_interval(values, 0.95),
                "p99_ms": float(np.percentile(arr, 99)),
                "mean_ms": float(arr.mean()),
                "ops_per_s": len(values) / wall,
                # Paced runs: how late the op was sent (the client's own wake-up, not the service).
                "sent_late_p50_ms": float(np.percentile(late[op], 50)) if late[op] else 0.0,
            }
    return {
        "clients": len(results),
        "seconds": seconds,
        "wall_s": wall,
        "ops": ops,
        "ops_per_s": ops / wall,
        "per_op": per_op,
        "errors": dict(errors),
        "error_count": sum(errors.values()),
        "verdicts": dict(verdicts),
        "checks": dict(checks),
        "acked": [(r["client"], r["acked"]) for r in results],
        "_results": results,  # for a windowed view; not written to the JSON
    }
