"""Learnings: rules a user states about the agent, queued as candidates for a reviewer."""

from __future__ import annotations

from ..errors import InvalidInput
from ..extraction.learnings import Learning
from ..wire import encode
from .registry import Call, Output, arg, verb


def _line(x: Learning) -> str:
    rule = x.rule or "(rule erased)"
    who = ", ".join(s.user or s.agent or s.tenant for s in x.supporters) or "no supporter"
    return f"{x.learning_id} [{x.status}] {x.scope}/{x.owner_id}: {rule} (v{x.version}; said by {who})"


@verb(
    "learnings",
    "the learnings queue: rules users stated about an agent, with who said them (admin: all of the tenant)",
    arg("--status", default="pending", choices=["pending", "accepted", "rejected", "all"], help="(default: pending)"),
    scope=False,
)
def learnings(call: Call) -> Output:
    found = call.tool.learnings(status=call.args.status)
    doc = {"status": call.args.status, "count": len(found), "learnings": encode(found)}
    return doc, "\n".join(_line(x) for x in found) or f"(no {call.args.status} learnings)", 0


@verb(
    "learning-decide",
    "accept or reject a learning (an admin of the tenant)",
    arg("learning_id", help="the learning's id (from `learnings`)"),
    arg("--accept", action="store_true", help="accept the rule"),
    arg("--reject", action="store_true", help="reject the rule"),
    scope=False,
    writes=True,
)
def learning_decide(call: Call) -> Output:
    args = call.args
    if args.accept == args.reject:
        raise InvalidInput("say --accept or --reject (one of them)", field="accept")
    decided = call.tool.learning_decide(args.learning_id, accept=args.accept)
    return encode(decided), _line(decided), 0
