"""The extraction and resolver verbs of ``memcore``: extract a transcript now or later, run the
queue, and run a conflict-resolver pass."""

from __future__ import annotations

import argparse
import json
from typing import Any, Callable

from ..api import Memory, MemoryTool
from ..errors import InvalidInput

EXTRACT_WRITE_VERBS = {"extract", "extract-later", "extraction-retry", "work-queue", "resolve"}
EXTRACT_READ_VERBS = {"extraction-status"}


def add_extract_verbs(op: Callable[..., argparse.ArgumentParser]) -> None:
    for name, text in (
        ("extract", "extract durable facts from a transcript now (set_from_messages)"),
        ("extract-later", "queue a transcript for extraction by a worker"),
    ):
        e = op(name, text, key=False)
        e.add_argument("file", help="a JSON list of {role, content, name?, id?, at?} messages, or - for stdin")
        e.add_argument("--session", help="the session the transcript belongs to (default: the run's session)")
        e.add_argument("--session-date", help="when the session took place (dates in it resolve against this)")
        if name == "extract":
            e.add_argument("--steps", help="comma-separated step names (default: the standard pipeline)")
            e.add_argument("--dry-run", action="store_true", help="run every step, write nothing")
    st = op("extraction-status", "this run's queued extraction jobs, and the scope's counts", key=False)
    st.add_argument("queue_ids", nargs="*", help="only these jobs")
    rt = op("extraction-retry", "put this run's failed extraction jobs back in line", key=False)
    rt.add_argument("queue_ids", nargs="*", help="only these jobs")
    wq = op("work-queue", "run due extraction and harvest jobs (all tenants)", key=False)
    wq.add_argument("--limit", type=int, default=8, help="jobs to lease (default 8)")
    wq.add_argument("--worker", help="the worker's name (default: worker-<pid>)")
    op("resolve", "one conflict-resolver pass over the home (offline rule judge): mark, judge, act", key=False)


def _messages(file: str) -> Any:
    from .verbs_write import _read

    try:
        return json.loads(_read(file))
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"the transcript is not JSON: {exc}", field="file") from None


def run_extract_verb(memory: Memory, tool: MemoryTool | None, args: argparse.Namespace) -> tuple[Any, str, int]:
    verb = args.op
    if verb == "resolve":
        report = memory.resolve().to_dict()
        return (
            report,
            " ".join(f"{k}={v}" for k, v in report.items() if not isinstance(v, dict))
            + " actions="
            + json.dumps(report["actions"]),
            0,
        )
    if verb == "work-queue":
        counts = memory.run_extraction_queue(worker=args.worker, limit=args.limit)
        return counts, " ".join(f"{k}={v}" for k, v in counts.items()), 0
    if verb == "extract":
        steps = [s.strip() for s in args.steps.split(",") if s.strip()] if args.steps else None
        result = tool.set_from_messages(
            _messages(args.file),
            session=args.session,
            session_date=args.session_date,
            scope=args.scope,
            steps=steps,
            dry_run=args.dry_run,
        )
        doc = result.to_dict()
        dropped = sum(len(v) for v in result.dropped.values())
        text = (
            f"{len(result.written)} fact(s) written, {dropped} dropped, {result.evidence} evidence row(s)"
            + "".join(f"\n  {k}" for k in result.written)
            + (" (dry run)" if args.dry_run else "")
        )
        return doc, text, 0
    if verb == "extract-later":
        queue_id = tool.enqueue_extraction(
            _messages(args.file), session=args.session, session_date=args.session_date, scope=args.scope
        )
        return {"queue_id": queue_id}, f"queued: {queue_id}", 0
    ids = args.queue_ids or None
    if verb == "extraction-retry":
        retried = tool.retry_extraction(ids, scope=args.scope)
        return {"retried": retried}, f"{len(retried)} job(s) back in line", 0
    rows = tool.extraction_status(ids, scope=args.scope)
    counts = tool.extraction_queue_status(scope=args.scope)
    text = (
        "\n".join(
            f"{r['queue_id']} {r['status']:<8} attempts={r['attempts']} {r['last_error'] or ''}".rstrip() for r in rows
        )
        or "(no jobs of yours)"
    )
    return {"jobs": rows, "counts": counts}, text + "\nscope: " + json.dumps(counts), 0
