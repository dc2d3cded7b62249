"""The benchmark's runs as pairs, each pair interleaved: the in-process run and the HTTP run of one
concurrency take turns in ``blocks`` blocks (ABBA...: in-process first in the even blocks, the
service first in the odd ones), each side on its own copy of the built home, both open for the
whole pair. So a drift of the shared host between minutes falls on both sides of a comparison
alike, and the in-process side runs as long as the service's (the N-thread side too: its 60 s
hold as many index writes as the service's, not 15). Each block's plans are the same on both
sides (the same ops, keys and values); a block's plans differ from another's.

A pair: 1 thread against 1 client for ``baseline_s`` a side (closed loops), then N threads
against N client processes for ``seconds`` a side (paced). The client processes are spawned once
per pair (``pool.ClientPool``). Then the service is stopped with SIGTERM and both copies' writes
are read back. Returns the same ``Outcome`` as the sequential order (``sequence``), the runs
with each block's own figures (``blocks``)."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from evals.service_load.clients import combine, run_http, run_in_process, warm_up
from evals.service_load.home import drop, fresh_copy, key_identity, make_embedder_for
from evals.service_load.loop import OPS, client_plan
from evals.service_load.pool import ClientPool
from evals.service_load.sequence import Outcome, Settings, outcome_of, paced, run_floor, upkeep_running
from evals.service_load.service import Service, server_time
from evals.service_load.writes import merge_acked, verify_writes


def block_figures(results: list[dict]) -> dict[str, Any]:
    """One side of one block, in short: per op, how many and the p50."""
    figures = combine(results, 0.0)["per_op"]
    return {op: {"n": f["n"], "p50_ms": f["p50_ms"]} for op, f in figures.items()}


def paired_deltas(blocks: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per op, the service's p50 minus the in-process one in each block, and their median: an
    estimate of what the service adds that the host's drift between blocks does not move."""
    import numpy as np

    out: dict[str, dict[str, float]] = {}
    for op in OPS:
        diffs = [
            b["http"][op]["p50_ms"] - b["inproc"][op]["p50_ms"] for b in blocks if op in b["http"] and op in b["inproc"]
        ]
        if diffs:
            out[op] = {"median_ms": float(np.median(diffs)), "blocks_ms": diffs}
    return out


class _Pair:
    """One pair's two sides: the in-process tools on one copy, the service on the other."""

    def __init__(self, settings: Settings, built: Path, work: Path, names: tuple[str, str], log) -> None:
        self.settings, self.names = settings, names
        self.home_in, self.keys_in = fresh_copy(built, work / names[0], settings.clients, log)
        self.home_http, self.keys_http = fresh_copy(built, work / names[1], settings.clients, log)
        self.service = Service(
            self.home_http,
            settings.embedder,
            settings.cache,
            settings.access_log,
            work / f"{names[1]}.log",
            settings.switch_interval,
            settings.upkeep_interval,
        )
        self.startup_s = time.perf_counter() - self.service.started
        log(f"  the service listens at {self.service.url} (pid {self.service.pid}) after {self.startup_s:.1f} s")


def _run_pair(
    pair: _Pair, per_user: list[int], count: int, side_s: float, rate: float, index: int, log
) -> tuple[dict[str, dict], list[dict], list[dict]]:
    """The pair's blocks; its two runs by name and each side's acknowledged writes (warm-up first)."""
    from memory_core import Memory
    from memory_core.client import RemoteMemory
    from memory_core.service import ServiceSettings
    from memory_core.service.process import tuned_process

    s, (name_in, name_http), service = pair.settings, pair.names, pair.service
    clients, blocks = s.clients, max(1, s.blocks)
    block_s = side_s / blocks
    served = ServiceSettings()
    interval = served.upkeep_interval_s if s.upkeep_interval is None else s.upkeep_interval
    sides: dict[str, list[list[dict]]] = {"inproc": [], "http": []}
    cpu = {"inproc": 0.0, "service": 0.0}
    per_block: list[dict[str, Any]] = []
    with Memory.open(pair.home_in, embedder=make_embedder_for(s.embedder, s.cache)) as memory:
        memory.prewarm_index(vector_budget_bytes=served.resident_vector_bytes)
        with (
            tuned_process(blas_threads=served.blas_threads, freeze=served.freeze_survivors),
            upkeep_running(memory, interval),
        ):
            tools = [memory.for_run(key_identity(k), origin="bench") for k in pair.keys_in]
            acks_in = [warm_up(tools, clients, per_user, s.mix, s.seed + 100 + index, min(3.0, s.baseline_s))]
            remotes = [RemoteMemory(service.url, k["token"]) for k in pair.keys_http]
            try:
                acks_http = [
                    warm_up(
                        [r.tool() for r in remotes],
                        clients,
                        per_user,
                        s.mix,
                        s.seed + 100 + index,
                        min(3.0, s.baseline_s),
                    )
                ]
            finally:
                for r in remotes:
                    r.close()
            processes = s.client_mode == "process"
            pool = ClientPool(service.url, [k["token"] for k in pair.keys_http], count) if processes else None
            log(f"{count} thread(s) / client(s), {blocks} block(s) of {block_s:g} s a side{paced(rate)} ...")
            before = service.metrics()
            try:
                for b in range(blocks):
                    label = f"{name_http}b{b}"
                    plans = [
                        client_plan(c, clients, per_user, label, s.mix, s.seed + index + 7 * b, rate)
                        for c in range(clients)
                    ]
                    shown: dict[str, Any] = {}
                    for side in ("inproc", "http") if b % 2 == 0 else ("http", "inproc"):
                        if side == "inproc":
                            out = run_in_process(memory, pair.keys_in, plans, block_s, count)
                            results = out["_results"]
                            cpu["inproc"] += out["process_cpu_s"]
                        else:
                            started = service.cpu_s()
                            if pool is not None:
                                results = pool.run(plans[:count], block_s)
                            else:
                                results = run_http(service.url, pair.keys_http, plans, block_s, count, "thread")[
                                    "_results"
                                ]
                            cpu["service"] += service.cpu_s() - started
                        sides[side].append(results)
                        shown[side] = block_figures(results)
                    per_block.append(shown)
                after = service.metrics()
            finally:
                if pool is not None:
                    pool.close()
    runs: dict[str, dict] = {}
    for side, name in (("inproc", name_in), ("http", name_http)):
        flat = [r for results in sides[side] for r in results]
        wall = sum(max(r["wall_s"] for r in results) for results in sides[side])
        runs[name] = combine(flat, side_s, wall=wall)
        runs[name]["clients"] = count  # not the results' number: each client gave one a block
        runs[name]["blocks"] = [shown[side] for shown in per_block]
    runs[name_in]["process_cpu_s"] = cpu["inproc"]
    runs[name_http]["server_ms"] = server_time(before, after)
    runs[name_http]["server_cpu_s"] = cpu["service"]
    if s.client_mode == "process":
        runs[name_http]["clients_cpu_s"] = sum(r["cpu_s"] for results in sides["http"] for r in results)
    runs[name_http]["paired_deltas"] = paired_deltas(per_block)
    for b, shown in enumerate(per_block):
        parts = [
            f"{op} {shown['inproc'][op]['p50_ms']:.2f} / {shown['http'][op]['p50_ms']:.2f}"
            for op in OPS
            if op in shown["inproc"] and op in shown["http"]
        ]
        log(f"  block {b}: p50 in-process / HTTP ms: " + ", ".join(parts))
    acks_in.append(runs[name_in])
    acks_http.append(runs[name_http])
    return runs, acks_in, acks_http


def run_paired(built: Path, per_user: list[int], settings: Settings, log) -> Outcome:
    """The floor (unless skipped), then the 1-thread / 1-client pair and the N pair, each
    interleaved (module docstring), each copy's writes read back after its pair."""
    work = Path(tempfile.mkdtemp(prefix="memcore-bench-service-"))
    runs: dict[str, dict] = {}
    chronological: list[dict] = []
    checks: list[dict] = []
    stops: list[dict] = []
    startups: list[float] = []
    pairs = [("inproc_1", "http_1", 1, settings.baseline_s, 0.0)]
    if settings.clients > 1:
        pairs.append(("inproc_n", "http_n", settings.clients, settings.seconds, settings.rate))
    try:
        if settings.floor:
            runs.update(run_floor(settings, per_user, log))
        for index, (name_in, name_http, count, side_s, rate) in enumerate(pairs):
            pair = _Pair(settings, built, work, (name_in, name_http), log)
            startups.append(pair.startup_s)
            try:
                got, acks_in, acks_http = _run_pair(pair, per_user, count, side_s, rate, index, log)
            finally:
                stops.append(pair.service.stop())
                log(f"  stopped (SIGTERM): exit code {stops[-1]['returncode']} after {stops[-1]['stop_s']:.1f} s")
            runs.update(got)
            chronological += acks_in + acks_http
            checks.append(verify_writes(pair.home_in, merge_acked(acks_in, pair.keys_in)))
            checks.append(verify_writes(pair.home_http, merge_acked(acks_http, pair.keys_http)))
            drop(work / name_in, settings.keep)
            drop(work / name_http, settings.keep)
    finally:
        if settings.keep:
            log(f"kept the runs' homes under {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return outcome_of(runs, chronological, checks, stops, startups, log)
