"""Substrate records and events as DuckDB rows, and back (``substrate``'s statements use these)."""

from __future__ import annotations

import json
from typing import Any

from ...substrate.decisions import DecisionTrace
from ...substrate.events import FactChange, FieldChange, StateChange
from ...substrate.frames import Frame, NextStep
from .schema import utc


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def event_params(seq: int, e: StateChange, audit_seq: int) -> list[Any]:
    facts = [
        {
            "fact_id": f.fact_id,
            "key": f.key,
            "before": f.before_version_id,
            "after": f.after_version_id,
            "changes": [[c.field, c.before, c.after] for c in f.changes],
        }
        for f in e.facts
    ]
    return [
        seq,
        e.event_id,
        e.event_type,
        e.tenant,
        e.scope,
        e.owner_id,
        e.key,
        e.entity,
        e.kind,
        e.memory_type,
        e.sensitivity,
        e.actor,
        to_json(list(e.actor_chain)),
        e.lens_id,
        e.frame_id,
        to_json(facts),
        to_json(list(e.evidence)),
        to_json(dict(e.summary)),
        e.recorded_at,
        audit_seq,
    ]


def frame_params(f: Frame) -> list[Any]:
    return [
        f.tenant,
        f.frame_id,
        f.version,
        f.consumer,
        f.scope,
        f.owner_id,
        f.intent,
        f.goal,
        to_json(list(f.tags)),
        to_json(list(f.lenses)),
        to_json([s.to_dict() for s in f.next_steps]),
        to_json(list(f.suppressed)),
        f.status,
        f.opened_at,
        f.changed_at,
        f.closed_at,
        f.summary,
    ]


def frame_of(r: dict[str, Any]) -> Frame:
    return Frame(
        frame_id=r["frame_id"],
        tenant=r["tenant"],
        consumer=r["consumer"],
        scope=r["scope"],
        owner_id=r["owner_id"],
        version=int(r["version"]),
        intent=r["intent"],
        goal=r["goal"],
        tags=tuple(json.loads(r["tags"])),
        lenses=tuple(json.loads(r["lenses"])),
        next_steps=tuple(NextStep(s["step"], s["assignee"], s["status"]) for s in json.loads(r["next_steps"])),
        suppressed=tuple(json.loads(r["suppressed"])),
        status=r["status"],
        opened_at=utc(r["opened_at"]),
        changed_at=utc(r["changed_at"]),
        closed_at=utc(r["closed_at"]),
        summary=r["summary"],
    )


def decision_params(d: DecisionTrace) -> list[Any]:
    return [
        d.tenant,
        d.scope,
        d.owner_id,
        d.decision_id,
        d.version,
        d.decision,
        d.rationale,
        to_json(list(d.inputs)),
        d.outcome,
        d.frame_id,
        d.lens_id,
        d.intent,
        to_json(list(d.tags)),
        d.actor,
        d.recorded_at,
    ]


def decision_of(r: dict[str, Any]) -> DecisionTrace:
    return DecisionTrace(
        decision_id=r["decision_id"],
        version=int(r["version"]),
        tenant=r["tenant"],
        scope=r["scope"],
        owner_id=r["owner_id"],
        decision=r["decision"],
        rationale=r["rationale"],
        inputs=tuple(json.loads(r["inputs"])),
        outcome=r["outcome"],
        frame_id=r["frame_id"],
        lens_id=r["lens_id"],
        intent=r["intent"],
        tags=tuple(json.loads(r["tags"])),
        actor=r["actor"],
        recorded_at=utc(r["recorded_at"]),
    )


def event_of(r: dict[str, Any]) -> StateChange:
    facts = tuple(
        FactChange(f["fact_id"], f["key"], f["before"], f["after"], tuple(FieldChange(*c) for c in f["changes"]))
        for f in json.loads(r["facts"])
    )
    return StateChange(
        event_id=r["event_id"],
        event_type=r["event_type"],
        tenant=r["tenant"],
        scope=r["scope"],
        owner_id=r["owner_id"],
        key=r["key"],
        entity=r["entity"],
        kind=r["kind"],
        memory_type=r["memory_type"],
        sensitivity=r["sensitivity"],
        actor=r["actor"],
        actor_chain=tuple(json.loads(r["actor_chain"])),
        lens_id=r["lens_id"],
        frame_id=r["frame_id"],
        facts=facts,
        evidence=tuple(json.loads(r["evidence"])),
        recorded_at=utc(r["recorded_at"]),
        summary=json.loads(r["summary"]),
        seq=int(r["seq"]),
    )
