"""Lineage and summaries: a fact's belief sources (what supports it), the worker that summarizes
conversation sessions, and the summaries a scope holds."""

from __future__ import annotations

from .registry import Call, Output, arg, verb


@verb("belief-sources", "what supports a key's facts: the turns, windows and rows, with each support type", key=True)
def belief_sources(call: Call) -> Output:
    rows = call.tool.belief_sources(call.args.key, scope=call.args.scope)
    text = "\n".join(
        f"{r['key']} <- {r['source_key']} ({r['support_type']}"
        + (f", turn {r['source_turn']}" if r["source_turn"] else "")
        + ")"
        for r in rows
    )
    return {"belief_sources": rows}, text or "(no belief sources)", 0


@verb(
    "summarize-sessions",
    "summarize each conversation session whose turns changed since its summary (offline rules)",
    arg("--dry-run", action="store_true", help="count the sessions behind, write nothing"),
    scope=False,
    identity=False,
    writes=lambda args: not args.dry_run,
    remote=True,
)
def summarize_sessions(call: Call) -> Output:
    runner = call.remote if call.remote is not None else call.memory  # through a service: its worker
    counts = runner.summarize_sessions(apply=not call.args.dry_run)
    text = " ".join(f"{name}={counts[name]}" for name in ("sessions", "built", "current", "failed", "dropped"))
    return counts, text + "".join(f"\n  {name}" for name in counts["behind"]), 0


@verb(
    "session-summaries",
    "the scope's session summaries (one digest per conversation session)",
    arg("session_id", nargs="?", help="one session's summary (none: every session of the scope)"),
)
def session_summaries(call: Call) -> Output:
    rows = call.tool.session_summaries(scope=call.args.scope, session_id=call.args.session_id)
    text = "\n".join(f"{r['session']} ({r['turns']} turn(s), {r['summarizer']}): {r['digest']}" for r in rows)
    return {"session_summaries": rows}, text or "(no session summaries)", 0
