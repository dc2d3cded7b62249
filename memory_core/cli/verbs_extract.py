"""The extraction and resolver verbs: extract a transcript now or later, its jobs, the queue
worker, and a conflict-resolver pass."""

from __future__ import annotations

import json

from .io import counts_line, json_file
from .registry import Call, Output, UsageError, arg, verb

_TRANSCRIPT = (
    arg("file", help="a JSON list of {role, content, name?, id?, at?} messages, or - for stdin"),
    arg("--session", help="the session the transcript belongs to (default: the run's session)"),
    arg("--session-date", help="when the session took place (dates in it resolve against this)"),
)


@verb(
    "extract",
    "extract durable facts from a transcript now (set_from_messages)",
    *_TRANSCRIPT,
    arg("--steps", help="comma-separated step names (default: the standard pipeline)"),
    arg("--dry-run", action="store_true", help="run every step, write nothing"),
    writes=True,
)
def extract(call: Call) -> Output:
    args = call.args
    steps = [s.strip() for s in args.steps.split(",") if s.strip()] if args.steps else None
    result = call.tool.set_from_messages(
        json_file(args.file, "transcript"),
        session=args.session,
        session_date=args.session_date,
        scope=args.scope,
        steps=steps,
        dry_run=args.dry_run,
    )
    dropped = sum(len(v) for v in result.dropped.values())
    text = (
        f"{len(result.written)} fact(s) written, {dropped} dropped, {result.evidence} evidence row(s)"
        + "".join(f"\n  {k}" for k in result.written)
        + "".join(f"\n  {k} (a rule about the agent: filed to the learnings queue)" for k in result.learnings)
        + (" (dry run)" if args.dry_run else "")
    )
    return result.to_dict(), text, 0


@verb("extract-later", "queue a transcript for extraction by a worker", *_TRANSCRIPT, writes=True)
def extract_later(call: Call) -> Output:
    args = call.args
    queue_id = call.tool.enqueue_extraction(
        json_file(args.file, "transcript"), session=args.session, session_date=args.session_date, scope=args.scope
    )
    return {"queue_id": queue_id}, f"queued: {queue_id}", 0


@verb(
    "extraction-status",
    "this run's queued extraction jobs, and the scope's counts",
    arg("queue_ids", nargs="*", help="only these jobs"),
)
def extraction_status(call: Call) -> Output:
    rows = [r.to_dict() for r in call.tool.extraction_status(call.args.queue_ids or None, scope=call.args.scope)]
    counts = call.tool.extraction_queue_status(scope=call.args.scope)
    text = (
        "\n".join(
            f"{r['queue_id']} {r['status']:<8} attempts={r['attempts']} {r['last_error'] or ''}".rstrip() for r in rows
        )
        or "(no jobs of yours)"
    )
    return {"jobs": rows, "counts": counts}, text + "\nscope: " + json.dumps(counts), 0


@verb(
    "extraction-retry",
    "put this run's failed extraction jobs back in line",
    arg("queue_ids", nargs="*", help="only these jobs"),
    writes=True,
)
def extraction_retry(call: Call) -> Output:
    retried = call.tool.retry_extraction(call.args.queue_ids or None, scope=call.args.scope)
    return {"retried": retried}, f"{len(retried)} job(s) back in line", 0


@verb(
    "work-queue",
    "run due extraction and harvest jobs (all tenants)",
    arg("--limit", type=int, default=8, help="jobs to lease (default 8)"),
    arg("--worker", help="the worker's name (default: worker-<pid>)"),
    scope=False,
    identity=False,
    writes=True,
    remote=True,
)
def work_queue(call: Call) -> Output:
    if call.remote is not None:
        if call.args.worker:
            raise UsageError("--worker names a worker of this process; through a service the service's worker runs")
        counts = call.remote.run_extraction_queue(limit=call.args.limit)
    else:
        counts = call.memory.run_extraction_queue(worker=call.args.worker, limit=call.args.limit)
    return counts, counts_line(counts), 0


@verb(
    "resolve",
    "one conflict-resolver pass over the home (offline rule judge): mark, judge, act",
    scope=False,
    identity=False,
    writes=True,
    remote=True,
)
def resolve(call: Call) -> Output:
    report = (call.remote or call.memory).resolve().to_dict()
    text = " ".join(f"{k}={v}" for k, v in report.items() if not isinstance(v, dict))
    return report, text + " actions=" + json.dumps(report["actions"]), 0
