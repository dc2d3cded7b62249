"""remember from a shell: frame-open, frame-update, frame-close, frame-show, frame-list; capture,
decide, decision-outcome; render, context, feedback; events."""

from __future__ import annotations

from typing import Any

from ..wire import encode
from .io import json_option
from .registry import Call, Output, arg, verb

LENS = arg("--lens", dest="lenses", action="append", metavar="LENS", help="a lens to wear (repeat; default: yours)")
FRAME = arg("--frame", dest="frame_id", metavar="FRAME_ID", help="the frame it serves")
READ_SCOPES = arg("--read-scope", dest="scopes", action="append", metavar="SCOPE", help="a scope to read (repeat)")


def _steps(values: list[str] | None) -> list[Any] | None:
    """``--step TEXT`` or ``--step JSON`` ({step, assignee, status})."""
    if values is None:
        return None
    return [json_option(v, "step") if v.lstrip().startswith("{") else v for v in values]


def _frame_line(frame: Any) -> str:
    steps = ", ".join(f"{s.step} [{s.assignee or '-'}: {s.status}]" for s in frame.next_steps)
    return (
        f"frame {frame.frame_id} v{frame.version} {frame.status}: {frame.intent} — {frame.goal}"
        + (f"\n  tags: {', '.join(frame.tags)}" if frame.tags else "")
        + (f"\n  next: {steps}" if steps else "")
        + (f"\n  suppressed: {', '.join(frame.suppressed)}" if frame.suppressed else "")
        + (f"\n  footprint: {', '.join(frame.footprint)}" if frame.footprint else "")
        + (f"\n  surfaced: {', '.join(frame.surfaced)}" if frame.surfaced else "")
    )


@verb(
    "frame-open",
    "open a frame: INTENT (explore, diagnose, plan, build, fix, review, decide, document, operate, learn) GOAL",
    arg("intent"),
    arg("goal"),
    arg("--tag", dest="tags", action="append", metavar="TAG"),
    arg("--step", dest="steps", action="append", metavar="STEP", help="a next step: text or JSON {step, assignee}"),
    LENS,
    scope=False,
    writes=True,
)
def frame_open(call: Call) -> Output:
    a = call.args
    frame = call.tool.frame_open(a.intent, a.goal, tags=a.tags, next_steps=_steps(a.steps), lenses=a.lenses)
    return encode(frame), _frame_line(frame), 0


@verb(
    "frame-update",
    "change an open frame of yours: its next steps, tags, suppressed refs",
    arg("frame_id"),
    arg("--step", dest="steps", action="append", metavar="STEP", help="the next steps, all of them (repeat)"),
    arg("--tag", dest="tags", action="append", metavar="TAG", help="the tags, all of them (repeat)"),
    arg("--suppress", action="append", metavar="REF", help="hide a ref from the frame's views (repeat)"),
    arg("--unsuppress", action="append", metavar="REF"),
    scope=False,
    writes=True,
)
def frame_update(call: Call) -> Output:
    a = call.args
    frame = call.tool.frame_update(
        a.frame_id, next_steps=_steps(a.steps), tags=a.tags, suppress=a.suppress, unsuppress=a.unsuppress
    )
    return encode(frame), _frame_line(frame), 0


@verb("frame-close", "close a frame of yours", arg("frame_id"), arg("--summary"), scope=False, writes=True)
def frame_close(call: Call) -> Output:
    frame = call.tool.frame_close(call.args.frame_id, summary=call.args.summary)
    return encode(frame), _frame_line(frame), 0


@verb(
    "frame-show",
    "a frame of yours, with its footprint and what was surfaced to it",
    arg("frame_id"),
    arg("--history", action="store_true", help="every version, oldest first"),
    scope=False,
)
def frame_show(call: Call) -> Output:
    if call.args.history:
        versions = call.tool.frame_history(call.args.frame_id)
        return {"versions": encode(versions)}, "\n".join(map(_frame_line, versions)), 0
    frame = call.tool.frame_get(call.args.frame_id)
    return encode(frame), _frame_line(frame), 0


@verb("frame-list", "your frames, newest first", arg("--status", choices=["open", "closed"]), scope=False)
def frame_list(call: Call) -> Output:
    found = call.tool.frames(status=call.args.status)
    lines = "\n".join(f"{f.frame_id}  {f.status:<6}  {f.intent:<8}  {f.goal}" for f in found)
    return {"count": len(found), "frames": encode(found)}, lines or "(no frames)", 0


@verb(
    "capture",
    "capture a CLAIM about ENTITY through a lens (answered with a signed receipt)",
    arg("entity"),
    arg("claim"),
    arg("--lens", dest="lens_id", required=True, metavar="LENS"),
    FRAME,
    arg("--source"),
    arg("--confidence", type=float),
    arg("--timestamp", help="when it was observed (ISO 8601)"),
    arg("--author"),
    arg("--actor", dest="actor_chain", action="append", metavar="ACTOR", help="who relayed it (repeat, in order)"),
    arg("--capture-key", dest="capture_key", metavar="KEY", help="a key of its own (a later claim supersedes)"),
    arg("--entity-type", help="its memory type (default lesson)"),
    writes=True,
)
def capture(call: Call) -> Output:
    a = call.args
    result = call.tool.capture(
        a.entity,
        a.claim,
        lens_id=a.lens_id,
        frame_id=a.frame_id,
        source=a.source,
        confidence=a.confidence,
        timestamp=a.timestamp,
        author=a.author,
        actor_chain=a.actor_chain,
        key=a.capture_key,
        entity_type=a.entity_type,
        scope=a.scope,
    )
    return encode(result), f"{result.verdict}: {result.key} (receipt {result.receipt.receipt_id})", 0


@verb(
    "decide",
    "record a decision trace: DECISION (act, wait, escalate, no_op) RATIONALE",
    arg("decision"),
    arg("rationale"),
    arg("--lens", dest="lens_id", required=True, metavar="LENS"),
    FRAME,
    arg("--input", dest="inputs", action="append", metavar="REF", help="a substrate ref it rests on (repeat)"),
    arg("--outcome"),
    writes=True,
)
def decide(call: Call) -> Output:
    a = call.args
    trace = call.tool.decide(
        a.decision,
        a.rationale,
        lens_id=a.lens_id,
        frame_id=a.frame_id,
        inputs=a.inputs,
        outcome=a.outcome,
        scope=a.scope,
    )
    return encode(trace), f"decision {trace.decision_id}: {trace.text}", 0


@verb("decision-outcome", "add the outcome of a decision of yours", arg("decision_id"), arg("outcome"), writes=True)
def decision_outcome(call: Call) -> Output:
    trace = call.tool.decision_outcome(call.args.decision_id, call.args.outcome, scope=call.args.scope)
    return encode(trace), f"decision {trace.decision_id} v{trace.version}: {trace.text}", 0


def _item_line(item: Any) -> str:
    why = item.why
    factors = f"p={why['priority']:.2f} r={why['recency']:.2f} t={why['tag_match']:.2f} v={why['value_per_token']:.2f}"
    return f"{why['rank']:>3}. [{item.scope}] {item.text[:100]}  ({item.tokens} tok; {factors})"


@verb(
    "render",
    "the view your lenses and a frame give of the substrate, with its receipt",
    LENS,
    FRAME,
    READ_SCOPES,
    scope=False,
)
def render(call: Call) -> Output:
    a = call.args
    view = call.tool.render(lenses=a.lenses, frame_id=a.frame_id, scopes=a.scopes)
    head = f"view through {', '.join(view.lenses)}: {len(view.items)} items (receipt {view.receipt.receipt_id})"
    return encode(view), "\n".join([head, *map(_item_line, view.items)]), 0


@verb(
    "context",
    "lessons and precedent for a frame within a token budget, each explained, with a receipt",
    LENS,
    FRAME,
    READ_SCOPES,
    arg("--budget", dest="token_budget", type=int, default=2000),
    arg("--query"),
    arg("--passes", type=int, default=3),
    arg("--index", dest="include_index", action="store_true", help="list what matched but did not fit"),
    scope=False,
)
def context(call: Call) -> Output:
    a = call.args
    found = call.tool.get_context(
        lenses=a.lenses,
        frame_id=a.frame_id,
        scopes=a.scopes,
        token_budget=a.token_budget,
        query=a.query,
        passes=a.passes,
        include_index=a.include_index,
    )
    used = f"{found.tokens_used}/{found.token_budget} tokens ({found.token_counter})"
    lines = [f"context: {used}, receipt {found.receipt.receipt_id}"]
    lines += ["lessons:", *map(_item_line, found.lessons)] if found.lessons else ["lessons: (none)"]
    lines += ["precedent:", *map(_item_line, found.precedent)] if found.precedent else []
    lines += [f"left out: {line.text}" for line in found.left_out]
    if found.left_out_total > len(found.left_out):
        lines.append(
            f"left out: {found.left_out_total - len(found.left_out)} more matched (--index lists them, in budget)"
        )
    return encode(found), "\n".join(lines), 0


@verb(
    "feedback",
    "say whether a ref a view or context surfaced was useful: INTERACTION_ID REF useful|not_useful",
    arg("interaction_id"),
    arg("ref"),
    arg("verdict", choices=["useful", "not_useful"]),
    scope=False,
    writes=True,
)
def feedback(call: Call) -> Output:
    a = call.args
    found = call.tool.retrieval_feedback(a.interaction_id, a.ref, a.verdict)
    return encode(found), f"{found.verdict}: {found.ref}", 0


@verb(
    "events",
    "the state-change events of your scopes after --since, oldest first",
    arg("--since", type=int, default=0),
    arg("--type", dest="types", action="append", metavar="TYPE", help="fact.superseded, fact.*, ... (repeat)"),
    LENS,
    READ_SCOPES,
    arg("--limit", type=int, default=100),
    scope=False,
)
def events(call: Call) -> Output:
    a = call.args
    page = call.tool.events(since=a.since, types=a.types, lenses=a.lenses, scopes=a.scopes, limit=a.limit)
    lines = [f"{e.seq:>6}  {e.event_type:<18} [{e.scope}] {e.key}  by {e.actor}" for e in page.events]
    return encode(page), "\n".join([*lines, f"next: --since {page.next_since}"]), 0
