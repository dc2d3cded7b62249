"""Frames: a consumer's binding to the task in front of it, kept in the store while the task lasts
and in its history after.

A frame names one of ten canonical intents, the goal in words, tags, the lenses it works
through, next steps (each with the consumer assigned to it) and the refs it suppresses (hidden
from every view rendered for it). What it touched (its footprint: every write made under it) and
what was surfaced to it (every ref a view or a context disclosed under it) are read from the
event stream and the interaction records, so they can never disagree with them. Each change is a
new version of the frame; a closed frame is history and takes no more changes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Sequence

from ..errors import FrameClosed, InvalidInput
from ..inputs import known_options, text, texts
from .refs import parse_refs

# The ten canonical intents: what a consumer is doing when it opens a frame.
INTENTS = {
    "explore": "find out what is there before deciding anything",
    "diagnose": "find the cause of a failure or an anomaly",
    "plan": "lay out the steps of work to come",
    "build": "make something new",
    "fix": "repair something that is broken",
    "review": "judge work someone else did",
    "decide": "choose between options and record why",
    "document": "write down what is known for others",
    "operate": "run, watch or maintain a system",
    "learn": "turn experience into lessons for later",
}
STEP_STATUSES = ("open", "done", "dropped")
MAX_STEPS = 100


@dataclass(frozen=True, slots=True)
class NextStep:
    step: str
    assignee: str | None = None  # the consumer the step is for ("agent:bob", "user:ana")
    status: str = "open"

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "assignee": self.assignee, "status": self.status}


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame, as its newest version holds it; ``footprint`` and ``surfaced`` are read beside it."""

    frame_id: str
    tenant: str
    consumer: str
    scope: str  # the namespace its events are kept in (the consumer's own)
    owner_id: str
    version: int
    intent: str
    goal: str
    tags: tuple[str, ...]
    lenses: tuple[str, ...]
    next_steps: tuple[NextStep, ...]
    suppressed: tuple[str, ...]
    status: str  # open | closed
    opened_at: datetime
    changed_at: datetime
    closed_at: datetime | None = None
    summary: str | None = None
    footprint: tuple[str, ...] = ()
    surfaced: tuple[str, ...] = ()

    @property
    def open(self) -> bool:
        return self.status == "open"


def parse_intent(value: object) -> str:
    found = text(value, "intent", max_chars=40).strip().lower()
    if found not in INTENTS:
        raise InvalidInput(f"unknown intent {found!r}; expected one of {', '.join(INTENTS)}", field="intent")
    return found


def parse_tags(value: object, field: str = "tags") -> tuple[str, ...]:
    found = texts(value, field) if value is not None else ()
    if len(found) > 50:
        raise InvalidInput(f"{field} holds {len(found)} tags; the limit is 50", field=field)
    return tuple(dict.fromkeys(t.strip().lower() for t in found))


def parse_steps(value: object) -> tuple[NextStep, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise InvalidInput("next_steps must be a list of steps (text, or {step, assignee, status})", field="next_steps")
    if len(value) > MAX_STEPS:
        raise InvalidInput(f"next_steps holds {len(value)} steps; the limit is {MAX_STEPS}", field="next_steps")
    out = []
    for i, item in enumerate(value):
        body = {"step": item} if isinstance(item, str) else item
        if not isinstance(body, dict):
            raise InvalidInput(f"next_steps[{i}] must be text or an object", field="next_steps")
        known_options(body, ("step", "assignee", "status"), f"next_steps[{i}]")
        status = body.get("status", "open")
        if status not in STEP_STATUSES:
            raise InvalidInput(f"next_steps[{i}].status must be one of {', '.join(STEP_STATUSES)}", field="next_steps")
        out.append(
            NextStep(
                text(body.get("step"), f"next_steps[{i}].step", max_chars=2000),
                text(body.get("assignee"), f"next_steps[{i}].assignee", optional=True, max_chars=200),
                status,
            )
        )
    return tuple(out)


def opened(
    frame_id: str,
    tenant: str,
    consumer: str,
    namespace: tuple[str, str],
    intent: object,
    goal: object,
    tags: object,
    lenses: Sequence[str],
    next_steps: object,
    now: datetime,
) -> Frame:
    scope, owner = namespace
    return Frame(
        frame_id=frame_id,
        tenant=tenant,
        consumer=consumer,
        scope=scope,
        owner_id=owner,
        version=1,
        intent=parse_intent(intent),
        goal=text(goal, "goal", max_chars=4000),
        tags=parse_tags(tags),
        lenses=tuple(lenses),
        next_steps=parse_steps(next_steps),
        suppressed=(),
        status="open",
        opened_at=now,
        changed_at=now,
    )


def updated(
    frame: Frame,
    now: datetime,
    *,
    next_steps: object = None,
    tags: object = None,
    suppress: object = None,
    unsuppress: object = None,
) -> Frame:
    """The frame's next version after an update (refused on a closed frame)."""
    if not frame.open:
        raise FrameClosed(f"frame {frame.frame_id} is closed; open a new frame", frame_id=frame.frame_id)
    hide = parse_refs(suppress, "suppress")
    show = set(parse_refs(unsuppress, "unsuppress"))
    suppressed = tuple(r for r in dict.fromkeys((*frame.suppressed, *hide)) if r not in show)
    return dataclasses.replace(
        frame,
        version=frame.version + 1,
        next_steps=frame.next_steps if next_steps is None else parse_steps(next_steps),
        tags=frame.tags if tags is None else parse_tags(tags),
        suppressed=suppressed,
        changed_at=max(now, frame.changed_at),
    )


def closed(frame: Frame, now: datetime, summary: object = None) -> Frame:
    if not frame.open:
        raise FrameClosed(f"frame {frame.frame_id} is closed already", frame_id=frame.frame_id)
    return dataclasses.replace(
        frame,
        version=frame.version + 1,
        status="closed",
        closed_at=max(now, frame.changed_at),
        changed_at=max(now, frame.changed_at),
        summary=text(summary, "summary", optional=True, max_chars=8000),
    )
