"""Observation capture: record tool-trace observations, crystallize a session, run the observation extraction."""

from __future__ import annotations

from .io import counts_line, json_file
from .registry import Call, Output, UsageError, arg, verb

_SESSION = arg("session_id", help="the session the observations belong to (no ':')")


@verb(
    "observe-record",
    "keep tool-trace observations of a session as episodic rows (observe_record)",
    _SESSION,
    arg("file", help="a JSON list of {tool, input?, output?, error?, at?} or {role, content, at?}, or - for stdin"),
    writes=True,
)
def observe_record(call: Call) -> Output:
    args = call.args
    doc = call.tool.observe_record(args.session_id, json_file(args.file, "observations"), scope=args.scope)
    return doc, f"{doc['recorded']} observation(s) recorded in session {doc['session']}", 0


@verb("observe-crystallize", "mark a session ready for the observation extraction", _SESSION, writes=True)
def observe_crystallize(call: Call) -> Output:
    doc = call.tool.observe_crystallize(call.args.session_id, scope=call.args.scope)
    said = "crystallized" if doc["changed"] else "already crystallized (nothing changed)"
    return doc, f"session {doc['session']}: {said}, {doc['observations']} observation(s), {doc['status']}", 0


@verb("observe-status", "a session's observation state: open, ready, running, done or failed", _SESSION)
def observe_status(call: Call) -> Output:
    doc = call.tool.observe_status(call.args.session_id, scope=call.args.scope)
    facts = (doc.get("result") or {}).get("facts") or []
    text = f"session {doc['session']}: {doc['status']}, {doc['observations']} observation(s)"
    return doc, text + "".join(f"\n  {k}" for k in facts), 0


@verb(
    "observe-extract",
    "replay crystallized sessions through extraction, each once (all tenants; off unless run)",
    arg("--limit", type=int, default=8, help="sessions to claim (default 8)"),
    arg("--worker", help="the worker's name (default: worker-<pid>)"),
    scope=False,
    identity=False,
    writes=True,
    remote=True,
)
def observe_extract(call: Call) -> Output:
    if call.remote is not None:
        if call.args.worker:
            raise UsageError("--worker names a worker of this process; through a service the service's worker runs")
        counts = call.remote.observe_extract(limit=call.args.limit)
    else:
        counts = call.memory.observe_extract(worker=call.args.worker, limit=call.args.limit)
    shown = {k: v for k, v in counts.items() if k != "sessions"}
    return counts, counts_line(shown), 0
