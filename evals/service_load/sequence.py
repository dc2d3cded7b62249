"""The benchmark's runs in order, each on its own copy of the built home: the in-process
baselines (1 thread, then N threads, the service not running), then the service as a subprocess
reached over HTTP (1 client, then N clients for the loaded run), each after the same warm-up and
each followed by the read-back of its acknowledged writes. A run's writes add index fragments and
slow the recalls after them, so no run reuses another's copy. Returns every run's figures, the
runs and warm-ups in the order they ran (every error counts), the writes checked, and how the
service started and stopped."""

from __future__ import annotations

import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from evals.service_load.clients import combine, run_http, run_in_process, warm_up
from evals.service_load.floor import BareServer
from evals.service_load.home import drop, fresh_copy, key_identity, make_embedder_for
from evals.service_load.loop import client_plan
from evals.service_load.service import Service, server_time
from evals.service_load.writes import merge_acked, verify_writes


@dataclass(frozen=True)
class Settings:
    """What a benchmark run was asked for (the options, with ``--quick``'s defaults applied)."""

    facts: int
    embedder: str
    cache: Path
    clients: int
    client_mode: str
    seconds: float
    baseline_s: float
    mix: dict[str, float]
    seed: int
    thread_baseline: bool
    access_log: bool
    switch_interval: float | None
    keep: bool
    rate: float = 0.0  # ops/s per client in the N-client runs (0: closed loop)
    floor: bool = True  # first, the bare round trip at 1 and N clients (``floor``)
    floor_httpx: bool = False  # and the N-client one again through httpx (the wire the client left)
    upkeep_interval: float | None = None  # the service's (and the baselines' upkeep); None: the default
    paired: bool = True  # each in-process run interleaved with its HTTP run (``paired``); else one after another
    blocks: int = 4  # paired: how many blocks each side of a pair takes turns in


@dataclass
class Outcome:
    """What the runs measured: ``runs`` by name, ``chronological`` (the runs and their warm-ups),
    the summed read-back (``writes``), the service's stops and its slowest startup."""

    runs: dict[str, dict]
    chronological: list[dict]
    writes: dict[str, Any]
    stopped: dict[str, Any]
    startup_s: float


def paced(rate: float) -> str:
    return f", {rate:g} ops/s per client" if rate else ", closed loop"


def run_floor(settings: Settings, per_user: list[int], log) -> dict[str, dict]:
    """The bare round trip (``floor``): 1 client in a closed loop, then N clients at the N-client
    runs' pacing, each for the baseline length, against one bare app; with ``floor_httpx``, the N
    clients again through ``httpx`` (``floor_n_httpx``)."""
    clients, base_s = settings.clients, settings.baseline_s
    server = BareServer()
    keys = [{"token": "mck_floor"}] * clients  # the bare app checks nothing: a key-shaped header
    runs: dict[str, dict] = {}
    try:
        floors = [("floor_1", 1), ("floor_n", clients)] + ([("floor_n_httpx", clients)] if settings.floor_httpx else [])
        for name, count in floors:
            rate = settings.rate if count > 1 else 0.0
            plans = [client_plan(c, clients, per_user, name, {"get": 1.0}, settings.seed, rate) for c in range(clients)]
            if name == "floor_n_httpx":
                for plan in plans:
                    plan["wire"] = "httpx"  # else RemoteMemory's own (``floor.floor_loop``)
            log(f"bare HTTP floor, {count} client(s), {base_s:g} s{paced(rate)} ...")
            runs[name] = run_http(server.url, keys, plans, base_s, count, "process", floor=True)
            runs[name]["acked"] = []
    finally:
        server.stop()
    return runs


@contextmanager
def upkeep_running(memory: Any, interval_s: float) -> Iterator[None]:
    """An index upkeep thread on ``memory`` while the block runs, as the service runs one."""
    from memory_core.api.upkeep import IndexUpkeep

    upkeep = IndexUpkeep(memory, interval_s).start()
    try:
        yield
    finally:
        upkeep.stop()


def run_sequence(built: Path, per_user: list[int], settings: Settings, log) -> Outcome:
    """Every run on its own copy of the built home (docs/benchmarks.md, "Memory service
    (bench_service)"), the copies removed at the end unless ``settings.keep``."""
    clients, base_s, mix, seed = settings.clients, settings.baseline_s, settings.mix, settings.seed
    work = Path(tempfile.mkdtemp(prefix="memcore-bench-service-"))
    runs: dict[str, dict] = {}
    chronological: list[dict] = []  # the runs and their warm-ups: every error is counted
    checks: list[dict] = []  # the read-back of each copy
    stops: list[dict] = []
    startups: list[float] = []
    service: Service | None = None
    in_process = [("inproc_1", 1, base_s)]
    if settings.thread_baseline and clients > 1:
        in_process.append(("inproc_n", clients, base_s))
    through_http = [("http_1", 1, base_s), ("http_n", clients, settings.seconds)]
    try:
        from memory_core import Memory
        from memory_core.client import RemoteMemory
        from memory_core.service import ServiceSettings
        from memory_core.service.process import tuned_process

        if settings.floor:
            runs.update(run_floor(settings, per_user, log))
        for n, (name, threads, length) in enumerate(in_process):
            home, keys = fresh_copy(built, work / name, clients, log)
            acks: list[dict] = []
            served = ServiceSettings()
            with Memory.open(home, embedder=make_embedder_for(settings.embedder, settings.cache)) as memory:
                # The library as the service runs it: the index loaded first, then the process tuned
                # (one BLAS thread, the collector's survivors frozen; undone after), an upkeep thread.
                memory.prewarm_index(vector_budget_bytes=served.resident_vector_bytes)
                interval = served.upkeep_interval_s if settings.upkeep_interval is None else settings.upkeep_interval
                with (
                    tuned_process(blas_threads=served.blas_threads, freeze=served.freeze_survivors),
                    upkeep_running(memory, interval),
                ):
                    tools = [memory.for_run(key_identity(k), origin="bench") for k in keys]
                    acks.append(warm_up(tools, clients, per_user, mix, seed + 100 + n, min(3.0, base_s)))
                    rate = settings.rate if threads > 1 else 0.0
                    plans = [client_plan(c, clients, per_user, name, mix, seed + n, rate) for c in range(clients)]
                    log(f"in-process, {threads} thread(s), {length:g} s{paced(rate)} ...")
                    runs[name] = run_in_process(memory, keys, plans, length, threads)
                    acks.append(runs[name])
            chronological += acks
            checks.append(verify_writes(home, merge_acked(acks, keys)))
            drop(work / name, settings.keep)

        for n, (name, count, length) in enumerate(through_http):
            home, keys = fresh_copy(built, work / name, clients, log)
            service = Service(
                home,
                settings.embedder,
                settings.cache,
                settings.access_log,
                work / f"{name}.log",
                settings.switch_interval,
                settings.upkeep_interval,
            )
            startups.append(time.perf_counter() - service.started)
            log(f"  the service listens at {service.url} (pid {service.pid}) after {startups[-1]:.1f} s")
            acks = []
            remotes = [RemoteMemory(service.url, k["token"]) for k in keys]
            try:
                tools = [r.tool() for r in remotes]
                acks.append(warm_up(tools, clients, per_user, mix, seed + 100 + n, min(3.0, base_s)))
            finally:
                for r in remotes:
                    r.close()
            # The seeds of the in-process run of as many threads: the same ops, keys and values.
            rate = settings.rate if count > 1 else 0.0
            plans = [client_plan(c, clients, per_user, name, mix, seed + n, rate) for c in range(clients)]
            log(f"HTTP, {count} client(s) ({settings.client_mode}es), {length:g} s{paced(rate)} ...")
            before, cpu_before = service.metrics(), service.cpu_s()
            runs[name] = run_http(service.url, keys, plans, length, count, settings.client_mode)
            runs[name]["server_ms"] = server_time(before, service.metrics())
            runs[name]["server_cpu_s"] = service.cpu_s() - cpu_before
            acks.append(runs[name])
            if name == "http_n" and "inproc_n" in runs and length > base_s:
                # The loaded run's first baseline-seconds: the same length, from the same start, as
                # the in-process run with as many threads (recalls slow as a run adds fragments).
                runs["http_n_window"] = combine(runs[name]["_results"], base_s, window=base_s)
                runs["http_n_window"]["acked"] = []
            stops.append(service.stop())
            service = None
            log(f"  stopped (SIGTERM): exit code {stops[-1]['returncode']} after {stops[-1]['stop_s']:.1f} s")
            chronological += acks
            checks.append(verify_writes(home, merge_acked(acks, keys)))
            drop(work / name, settings.keep)
    finally:
        if service is not None:
            service.stop()
        if settings.keep:
            log(f"kept the runs' homes under {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return outcome_of(runs, chronological, checks, stops, startups, log)


def outcome_of(
    runs: dict[str, dict], chronological: list[dict], checks: list[dict], stops: list[dict], startups: list[float], log
) -> Outcome:
    """The runs' ``Outcome``: every copy's read-back summed, and the service's stops together."""
    writes = {
        "checked": sum(c["checked"] for c in checks),
        "lost": sum(c["lost"] for c in checks),
        "not_live": sum(c["not_live"] for c in checks),
        "examples": [e for c in checks for e in c["examples"]][:5],
        "verify_s": sum(c["verify_s"] for c in checks),
    }
    stopped = {
        "returncode": [s["returncode"] for s in stops],
        "stop_s": max(s["stop_s"] for s in stops),
        "clean": all(s["clean"] for s in stops),
    }
    log(f"read back {writes['checked']:,} acknowledged keys in {writes['verify_s']:.1f} s")
    return Outcome(runs, chronological, writes, stopped, max(startups))
