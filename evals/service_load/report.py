"""The benchmark's report: the runs labelled and put in order, the Markdown table of latencies
(each run beside the in-process run of the same concurrency, as ratios), the targets judged
PASS/FAIL (the service's overhead at p50, recall p95 through HTTP, no error, no lost write, a
clean stop), the JSON result written with the commit measured, and the summary logged: the
table, the service's own time per op, CPU use, verdicts and checks, and the targets."""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from evals.service_load.loop import OPS
from evals.service_load.sequence import Outcome, Settings

TARGET_OVERHEAD_MS = 2.0
TARGET_RECALL_P95_MS = 40.0


def pace_text(rate: float) -> str:
    return f"{rate:g} ops/s each, Poisson arrivals" if rate else "closed loop, no think time"


def _cell(run: dict | None, op: str, field: str) -> str:
    if run is None or op not in run["per_op"]:
        return "-"
    return f"{run['per_op'][op][field]:.2f}"


def table(runs: dict[str, dict | None], labels: dict[str, str], base_for: dict[str, str]) -> str:
    lines = [
        "| run | ops/s | get p50 | get p95 | set p50 | set p95 | recall p50 | recall p95 | errors |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, run in runs.items():
        if run is None:
            continue
        base = runs.get(base_for.get(name, ""))
        ratio = f" ({run['ops_per_s'] / base['ops_per_s']:.2f}×)" if base else ""
        cells = []
        for op in OPS:
            for field in ("p50_ms", "p95_ms"):
                cell = _cell(run, op, field)
                if base is not None and op in base["per_op"] and op in run["per_op"] and cell != "-":
                    cell += f" ({run['per_op'][op][field] / base['per_op'][op][field]:.2f}×)"
                cells.append(cell)
        lines.append(
            f"| {labels[name]} | {run['ops_per_s']:.1f}{ratio} | " + " | ".join(cells) + f" | {run['error_count']} |"
        )
    return "\n".join(lines)


def tree_state() -> dict[str, Any]:
    """The commit measured, and whether the library's files differed from it (a digest of the diff)."""
    import hashlib

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            return ""

    diff = git("diff", "HEAD", "--", "memory_core") + git("ls-files", "--others", "--exclude-standard", "memory_core")
    return {
        "commit": git("rev-parse", "HEAD").strip() or None,
        "memory_core_dirty": bool(diff),
        "memory_core_diff_sha256": hashlib.sha256(diff.encode()).hexdigest()[:16] if diff else None,
    }


def run_labels(settings: Settings) -> dict[str, str]:
    """Each run's label in the table and the log, in the order the report shows them."""
    clients, base_s = settings.clients, settings.baseline_s
    pace = f", {settings.rate:g}/s each" if settings.rate else ""
    floors = {
        "floor_1": "bare HTTP floor, 1 client",
        "floor_n": f"bare HTTP floor, {clients} clients{pace}",
        "floor_n_httpx": f"bare HTTP floor through httpx, {clients} clients{pace}",
    }
    if settings.paired:  # each side as long as the other, taking turns
        turns = f", {settings.blocks} blocks" if settings.blocks > 1 else ""
        return floors | {
            "inproc_1": f"in-process, 1 thread, {base_s:g} s{turns}",
            "http_1": f"HTTP, 1 client, {base_s:g} s{turns}",
            "inproc_n": f"in-process, {clients} threads{pace}, {settings.seconds:g} s{turns}",
            "http_n": f"HTTP, {clients} clients{pace}, {settings.seconds:g} s{turns}",
        }
    return floors | {
        "inproc_1": "in-process, 1 thread",
        "inproc_n": f"in-process, {clients} threads{pace}",
        "http_1": "HTTP, 1 client",
        "http_n_window": f"HTTP, {clients} clients{pace}, first {base_s:g} s",
        "http_n": f"HTTP, {clients} clients{pace}, {settings.seconds:g} s",
    }


def judge(runs: dict[str, dict], outcome: Outcome, settings: Settings) -> tuple[dict[str, Any], list[str]]:
    """The targets: each one's value and verdict, and a line per target for the log. The service's
    overhead is judged unloaded (1 client against 1 thread: what a request costs); under load the
    latency is queueing on 2 shared cores, shown beside it."""
    clients, writes, stopped = settings.clients, outcome.writes, outcome.stopped
    loaded = "http_n_window" if "http_n_window" in runs else "http_n"

    def delta(run: str, base: str, op: str) -> float | None:
        if run not in runs or base not in runs or op not in runs[run]["per_op"] or op not in runs[base]["per_op"]:
            return None
        return runs[run]["per_op"][op]["p50_ms"] - runs[base]["per_op"][op]["p50_ms"]

    verdict_lines: list[str] = []
    results: dict[str, Any] = {}

    def target(name: str, value: float | None, limit: float, shown: str) -> None:
        if value is None:  # the mix has no such op
            results[name] = {"value_ms": None, "pass": None}
            verdict_lines.append(f"- SKIP {name}: not in the mix")
            return
        results[name] = {"value_ms": value, "pass": value <= limit}
        verdict_lines.append(f"- {'PASS' if value <= limit else 'FAIL'} {name}: {shown.format(value)}")

    for op in ("get", "set"):
        limit = TARGET_OVERHEAD_MS
        target(
            f"{op}: service adds <= {limit:g} ms at p50 (1 client vs 1 thread)",
            delta("http_1", "inproc_1", op),
            limit,
            "{:+.2f} ms",
        )
        if "inproc_n" in runs:
            span = "interleaved" if settings.paired else "first"
            target(
                f"{op}: service adds <= {limit:g} ms at p50 ({clients} clients vs {clients} threads, "
                f"{span} {runs[loaded]['wall_s']:.0f} s each)",
                delta(loaded, "inproc_n", op),
                limit,
                "{:+.2f} ms",
            )
    results["floor"] = floor_split(runs, loaded, verdict_lines)
    results["paired"] = paired_lines(runs, verdict_lines)
    for run, who in (("http_n", f"{clients} clients"), ("http_1", "1 client")):
        if run not in runs:  # one client: its pair is the only one
            continue
        recall = runs[run]["per_op"].get("recall", {})
        target(
            f"recall p95 through HTTP <= {TARGET_RECALL_P95_MS:g} ms ({who}, {settings.facts:,} facts)",
            recall.get("p95_ms"),
            TARGET_RECALL_P95_MS,
            "{:.2f} ms" + interval_text(recall),
        )
    errors_total = sum(r["error_count"] for r in outcome.chronological)
    results["zero errors"] = {"value": errors_total, "pass": errors_total == 0}
    all_errors: Counter[str] = Counter()
    for r in outcome.chronological:
        all_errors.update(r["errors"])
    verdict_lines.append(
        f"- {'PASS' if errors_total == 0 else 'FAIL'} zero errors: {errors_total} {dict(all_errors) or ''}"
    )
    results["zero lost writes"] = {"value": writes["lost"], "pass": writes["lost"] == 0 and writes["not_live"] == 0}
    verdict_lines.append(
        f"- {'PASS' if results['zero lost writes']['pass'] else 'FAIL'} zero lost writes: {writes['lost']} lost, "
        f"{writes['not_live']} not live, of {writes['checked']:,} acknowledged keys read back"
    )
    results["service stopped cleanly"] = {"value": stopped["returncode"], "pass": stopped["clean"]}
    return results, verdict_lines


def paired_lines(runs: dict[str, dict], lines: list[str]) -> dict[str, Any]:
    """Interleaved runs: per HTTP run and op, the service's p50 minus the in-process one block by
    block, and their median (what the host's drift between blocks does not move). Appends a line
    per run and op to ``lines``; returns the figures."""
    out: dict[str, Any] = {}
    for name in ("http_1", "http_n"):
        deltas = runs.get(name, {}).get("paired_deltas")
        if not deltas:
            continue
        out[name] = deltas
        for op in OPS:
            if op in deltas:
                shown = ", ".join(f"{d:+.2f}" for d in deltas[op]["blocks_ms"])
                lines.append(
                    f"-      {op} ({name}): the service's p50 minus the in-process one, block by block: "
                    f"{shown} ms (median {deltas[op]['median_ms']:+.2f})"
                )
    return out


def interval_text(figures: dict[str, Any]) -> str:
    """Where the true p95 lies, from this many ops: a verdict inside the interval's span is
    within what the sample can tell."""
    interval = figures.get("p95_interval_ms")
    if interval is None:  # too few recalls for one, or none in the mix
        return ""
    low, high = interval
    return f" (95% interval of the p95 from {figures['n']} recalls: {low:.2f} to {high:.2f} ms)"


def floor_split(runs: dict[str, dict], loaded: str, lines: list[str]) -> dict[str, Any]:
    """A get's overhead through the service split in two: the bare round trip of the same shape at
    the same pacing (the host's floor: HTTP client, server and wake-ups) and the rest (the memory
    stack's own). Appends a line per concurrency to ``lines``; returns the figures."""
    split: dict[str, Any] = {}
    for http, inproc, floor in (("http_1", "inproc_1", "floor_1"), (loaded, "inproc_n", "floor_n")):
        if not all(name in runs and "get" in runs[name]["per_op"] for name in (http, inproc, floor)):
            continue
        added = runs[http]["per_op"]["get"]["p50_ms"] - runs[inproc]["per_op"]["get"]["p50_ms"]
        bare = runs[floor]["per_op"]["get"]["p50_ms"]
        split[http] = {"added_ms": added, "floor_ms": bare, "stack_ms": added - bare}
        lines.append(
            f"-      get's {added:+.2f} ms ({http} vs {inproc}) = the host's bare round trip {bare:.2f} ms "
            f"({floor}) + the memory stack's own {added - bare:+.2f} ms"
        )
    return split


def server_lines(runs: dict[str, dict], labels: dict[str, str]) -> list[str]:
    """Per HTTP run: the service's own mean time per op beside the mean the clients saw."""
    lines = []
    for name in ("http_1", "http_n"):
        if name in runs and runs[name].get("server_ms"):
            srv = runs[name]["server_ms"]
            parts = []
            for op in OPS:
                if op in srv and op in runs[name]["per_op"]:
                    parts.append(f"{op} {srv[op]:.2f} ms of {runs[name]['per_op'][op]['mean_ms']:.2f} ms")
            lines.append(f"- {labels[name]}: service time / client-seen mean: " + ", ".join(parts))
    for name, run in runs.items():
        late = {op: v["sent_late_p50_ms"] for op, v in run["per_op"].items() if v.get("sent_late_p50_ms")}
        if late:
            shown = ", ".join(f"{op} {ms:.2f} ms" for op, ms in late.items())
            lines.append(f"- {labels[name]}: sent after it was due (the client waking), p50: {shown}")
    return lines


def write_report(outcome: Outcome, settings: Settings, command: str, out_path: Path, log) -> dict[str, Any]:
    """The JSON result written to ``out_path`` and the summary logged; returns the result."""
    clients, seconds, base_s, mix = settings.clients, settings.seconds, settings.baseline_s, settings.mix
    stopped, startup_s = outcome.stopped, outcome.startup_s
    labels = run_labels(settings)
    runs = {name: outcome.runs[name] for name in labels if name in outcome.runs}
    base_for = {
        "http_1": "inproc_1",
        "http_n_window": "inproc_n",
        "http_n": "inproc_n" if "inproc_n" in runs else "inproc_1",
    }
    md = table(runs, labels, base_for)
    results, verdict_lines = judge(runs, outcome, settings)
    floor = results.pop("floor")
    paired = results.pop("paired")
    report = {
        "at": datetime.now(timezone.utc).isoformat(),
        "tree": tree_state(),
        "command": command,
        "facts": settings.facts,
        "embedder": settings.embedder,
        "clients": clients,
        "client_mode": settings.client_mode,
        "seconds": seconds,
        "baseline_seconds": base_s,
        "mix": mix,
        "rate_per_client": settings.rate,
        "access_log": settings.access_log,
        "switch_interval": settings.switch_interval,
        "upkeep_interval": settings.upkeep_interval,
        "cpus": os.cpu_count(),
        "service_startup_s": startup_s,
        "service_stop": stopped,
        "runs": {k: {f: v for f, v in r.items() if f != "acked" and not f.startswith("_")} for k, r in runs.items()},
        "writes": outcome.writes,
        "targets": results,
        "floor": floor,
        "paired": paired,
        "blocks": settings.blocks if settings.paired else None,
        "table_md": md,
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(report, indent=2, default=str))
    log("")
    log(
        f"memory service under load: {settings.facts:,} facts ({settings.embedder}), {clients} clients "
        f"({settings.client_mode}es, {pace_text(settings.rate)}), {seconds:g} s loaded, baselines {base_s:g} s; mix "
        + ", ".join(f"{op} {share:.0%}" for op, share in mix.items())
        + f"; {os.cpu_count()} CPUs"
        + (f"; each in-process run interleaved with its HTTP run, {settings.blocks} blocks" if settings.paired else "")
    )
    log("latencies in ms as the client sees them; (×) = ratio to the in-process run of the same concurrency")
    log("")
    log(md)
    log("")
    for line in server_lines(runs, labels):
        log(line)
    for name, run in runs.items():
        wall = run["wall_s"]
        if "process_cpu_s" in run:
            cpu = run["process_cpu_s"]
            log(f"- {labels[name]}: CPU {cpu:.1f} s in {wall:.0f} s ({cpu / wall:.2f} cores)")
        elif "server_cpu_s" in run:
            used = run["server_cpu_s"] + run.get("clients_cpu_s", 0.0)
            log(
                f"- {labels[name]}: CPU service {run['server_cpu_s']:.1f} s + clients "
                f"{run.get('clients_cpu_s', 0.0):.1f} s in {wall:.0f} s ({used / wall:.2f} cores; "
                f"the clients' share {run.get('clients_cpu_s', 0.0) / used:.0%})"
            )
    for name in runs:
        if name != "http_n_window":
            log(f"- {labels[name]}: verdicts {runs[name]['verdicts']}, checks {runs[name]['checks']}")
    log("")
    for line in verdict_lines:
        log(line)
    log(
        f"- {'PASS' if stopped['clean'] else 'FAIL'} service stopped cleanly on SIGTERM (exit code "
        f"{stopped['returncode']}, no traceback) in {stopped['stop_s']:.1f} s; startup {startup_s:.1f} s"
    )
    log(f"result: {out_path}")
    return report
