"""The memory service under load: `python -m evals.bench_service [--facts 100000] [--clients 16] [--seconds 60]`.

A home of ``--facts`` facts (``bulk_set``, static embedder by default) spread over 16 users of 4
tenants is built once and cached by size and embedder (``--home``); each run works on a copy.
An API key per client identity is made before the service starts. Then, on the copy:

0. the host's floor (``--no-floor`` skips it): a bare ASGI app under uvicorn answering every
   request at once, reached by get-shaped requests through ``RemoteMemory``'s wire at the runs'
   pacing, 1 client then ``--clients``, ``--baseline-seconds`` each; each get overhead target is
   then split into this floor and the memory stack's own share (``service_load/floor.py``);
   ``--floor-httpx`` adds the N-client floor through ``httpx`` (the wire the client used before);
1. the 1-thread / 1-client pair: the same client loop on ``Memory.open``'s tool in this process
   (the library set up as the service sets it up: the index prewarmed, the process tuned, an
   upkeep thread, so that the difference is HTTP's) and through ``serve`` in a subprocess on
   127.0.0.1, port 0, by ``RemoteMemory``: ``--baseline-seconds`` a side, the two sides taking
   turns in ``--blocks`` blocks (in-process first in the even blocks, the service first in the
   odd ones), each on its own copy of the home, both open for the whole pair, each block's plans
   the same on both sides. A drift of the shared host between minutes falls on both alike;
2. the N pair the same way: ``--clients`` threads against as many client processes (spawned
   once, given one block after another), ``--seconds`` a side, so the in-process side runs as
   long as the loaded service and meets as many index writes. Per block and op the two p50s
   are printed, and their difference's median beside the targets. ``--sequential`` runs the
   earlier order instead (in-process 1 and N threads for ``--baseline-seconds`` each, then the
   service with 1 client, then N clients for ``--seconds``, its first ``--baseline-seconds``
   compared with the N threads);
3. after each pair the service stopped with SIGTERM, each copy opened again and every acknowledged
   write read back:
   the key's live value must be the last acknowledged one (a lost write is an acknowledged
   version row that is not in the key's history at all).

Each client works on its own user's facts with the op mix (``--mix``, default 45% get, 35% set,
20% recall): a set revises one of the client's facts or adds a new key (half each); a get reads a
key the client wrote (and checks the value: read-your-writes) or one of its facts; a recall asks
a question built from the facts' vocabulary. A set value starts with a word no other value has, so
the peer check never retires another key's fact and every acknowledged value must stay live.

Latencies are per op, as the client sees them (the remote client's encoding and decoding
included). The service's own per-op time (its ``/metrics`` histograms, arrival to answer) is
read before and after the load, so the client-side and wire share can be told apart. The machine
is shared: figures are quoted beside the in-process baseline of the same run.

Targets (PASS/FAIL): the service adds at most 2 ms at p50 to get and set (judged 1 client against
1 thread, and N clients against N threads); recall p95 through HTTP at most 40 ms; no error; no
lost write; a clean stop on SIGTERM. Every p95 comes with a 95% interval for the true p95
(``p95_interval_ms``, order statistics: ``evals.metrics.quantile_interval``), quoted beside the
recall targets: a loaded minute holds about 180 recalls, and the p95 of so few moves by several
milliseconds from one minute to the next with nothing else changed.

The 1-client and 1-thread runs are closed loops (back to back: what one request costs). In the
N-client and N-thread runs each client sends ``--rate`` ops per second as a Poisson process (an
agent asks its memory between model calls) and each op is timed from when it was due, so a client
that falls behind charges its backlog to the ops that waited. ``--rate 0`` makes them closed
loops too: then the N-client figures are the service saturated (N requests always waiting), which
measures capacity, not latency at a load.

``--quick``: 5,000 facts, 4 clients, 10 s (5 s baselines), for a smoke run. ``--out``: the JSON
result (default ``/tmp/bench_service-<time>.json``). ``checks.get_none`` counts reads of bulk
facts that the bulk write's own peer check retired (newest wins): not an error.
Results and what they showed: docs/benchmarks.md, "Memory service (bench_service)" and its
second pass.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

# Only light imports at module level: client processes are spawned and import this module (the
# main module) and evals.service_load.clients; the package imports the library lazily too.
from evals.service_load.home import cached_home
from evals.service_load.loop import DEFAULT_MIX, parse_mix
from evals.service_load.paired import run_paired
from evals.service_load.report import write_report
from evals.service_load.sequence import Settings, run_sequence

# An agent asks its memory between model calls: 16 agents at 2 ops/s each (32 ops/s) is a busy
# deployment on 2 cores, well below what the service can take (the closed loop shows that).
DEFAULT_RATE = 2.0


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, help="facts in the home (default 100,000; --quick 5,000)")
    parser.add_argument("--clients", type=int, help="concurrent clients (default 16; --quick 4)")
    parser.add_argument("--seconds", type=float, help="length of the loaded HTTP run (default 60; --quick 10)")
    parser.add_argument("--baseline-seconds", type=float, help="length of each baseline run (default 15; --quick 5)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 5,000 facts, 4 clients, 10 s")
    parser.add_argument("--mix", default=DEFAULT_MIX, help=f"op shares (default {DEFAULT_MIX})")
    parser.add_argument("--embedder", default="static", choices=("static", "hashing"))
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(".memory/models"),
        help="where the distilled static model is cached (default .memory/models)",
    )
    parser.add_argument(
        "--home",
        type=Path,
        help="the built home to reuse (built there when missing or of another size); "
        "default .memory/bench_service/home-<embedder>-<facts>. Runs work on a copy.",
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=DEFAULT_RATE,
        help=f"ops/s per client in the N-client runs, Poisson arrivals (default {DEFAULT_RATE:g}; 0: closed loop)",
    )
    parser.add_argument("--client-mode", choices=("process", "thread"), default="process")
    parser.add_argument("--no-thread-baseline", action="store_true", help="skip the in-process run with N threads")
    parser.add_argument("--no-access-log", action="store_true", help="serve without the access log")
    parser.add_argument("--no-floor", action="store_true", help="skip the bare HTTP round trip (the host's floor)")
    parser.add_argument(
        "--floor-httpx",
        action="store_true",
        help="also the N-client bare round trip through httpx (RemoteMemory(transport=...)'s wire)",
    )
    parser.add_argument(
        "--switch-interval",
        type=float,
        help="an experiment: sys.setswitchinterval(S) in the service process (Python's default 0.005)",
    )
    parser.add_argument(
        "--upkeep-interval",
        type=float,
        help="an experiment: the index upkeep's interval in seconds, in the service and the baselines "
        "(default ServiceSettings': 0.02)",
    )
    parser.add_argument(
        "--blocks",
        type=int,
        default=4,
        help="each in-process run and its HTTP run take turns in this many blocks (default 4)",
    )
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="the runs one after another instead (in-process 1 and N threads, then HTTP 1 and N clients)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the run's copy of the home")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="the JSON result (default /tmp/bench_service-<time>.json)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)

    quick = args.quick
    facts = args.facts if args.facts is not None else (5_000 if quick else 100_000)
    clients = args.clients if args.clients is not None else (4 if quick else 16)
    settings = Settings(
        facts=facts,
        embedder=args.embedder,
        cache=args.cache,
        clients=clients,
        client_mode=args.client_mode,
        seconds=args.seconds if args.seconds is not None else (10.0 if quick else 60.0),
        baseline_s=args.baseline_seconds if args.baseline_seconds is not None else (5.0 if quick else 15.0),
        mix=parse_mix(args.mix),
        seed=args.seed,
        thread_baseline=not args.no_thread_baseline,
        access_log=not args.no_access_log,
        switch_interval=args.switch_interval,
        upkeep_interval=args.upkeep_interval,
        keep=args.keep,
        rate=args.rate,
        floor=not args.no_floor,
        floor_httpx=args.floor_httpx and not args.no_floor,
        paired=not args.sequential,
        blocks=max(1, args.blocks),
    )
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out_path = args.out or Path(tempfile.gettempdir()) / f"bench_service-{stamp}.json"

    def log(message: str) -> None:
        if not args.quiet:
            print(message, flush=True)

    built = args.home or Path(".memory/bench_service") / f"home-{args.embedder}-{facts}"
    layout = cached_home(built, facts, args.embedder, args.cache, log)
    runner = run_paired if settings.paired else run_sequence
    outcome = runner(built, layout["per_user"], settings, log)
    command = "python -m evals.bench_service " + " ".join(argv if argv is not None else sys.argv[1:])
    return write_report(outcome, settings, command, out_path, log)


if __name__ == "__main__":
    main()
