"""Substrate records and events as DuckDB rows, and back (``substrate``'s statements use these)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Sequence

from ...substrate.decisions import DecisionTrace
from ...substrate.events import FactChange, FieldChange, StateChange
from ...substrate.frames import Frame, NextStep
from ...substrate.lenses import Lens, parse_lens
from .schema import utc


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def first_seen(refs_rows: Sequence[Sequence[Any]]) -> list[str]:
    """The refs of rows of one JSON list each (``interactions.refs``), in the order first shown."""
    out: dict[str, None] = {}
    for (refs,) in refs_rows:
        for r in json.loads(refs):
            out.setdefault(r, None)
    return list(out)


def lens_of(tenant: str, row: Sequence[Any]) -> Lens:
    """A lens from its newest contract row joined to its preferences: (lens_id, version,
    contract, preferences, defined_at, defined_by)."""
    lens_id, version, contract, prefs, at, by = row
    return parse_lens(
        tenant,
        lens_id,
        json.loads(contract),
        json.loads(prefs) if prefs else None,
        version=int(version),
        defined_at=utc(at),
        defined_by=by,
    )


def event_params(seq: int, e: StateChange, audit_seq: int) -> list[Any]:
    body = {
        "key": e.key,
        "entity": e.entity,
        "kind": e.kind,
        "memory_type": e.memory_type,
        "sensitivity": e.sensitivity,
        "actor": e.actor,
        "actor_chain": list(e.actor_chain),
        "lens_id": e.lens_id,
        "facts": [
            {
                "fact_id": f.fact_id,
                "key": f.key,
                "before": f.before_version_id,
                "after": f.after_version_id,
                "changes": [[c.field, c.before, c.after] for c in f.changes],
            }
            for f in e.facts
        ],
        "evidence": list(e.evidence),
        "summary": dict(e.summary),
        "recorded_at": e.recorded_at.isoformat(),
    }
    return [seq, e.event_id, e.event_type, e.tenant, e.scope, e.owner_id, e.frame_id, to_json(body), audit_seq]


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
    body = json.loads(r["body"])
    facts = tuple(
        FactChange(f["fact_id"], f["key"], f["before"], f["after"], tuple(FieldChange(*c) for c in f["changes"]))
        for f in body["facts"]
    )
    return StateChange(
        event_id=r["event_id"],
        event_type=r["event_type"],
        tenant=r["tenant"],
        scope=r["scope"],
        owner_id=r["owner_id"],
        key=body["key"],
        entity=body["entity"],
        kind=body["kind"],
        memory_type=body["memory_type"],
        sensitivity=body["sensitivity"],
        actor=body["actor"],
        actor_chain=tuple(body["actor_chain"]),
        lens_id=body["lens_id"],
        frame_id=r["frame_id"],
        facts=facts,
        evidence=tuple(body["evidence"]),
        recorded_at=datetime.fromisoformat(body["recorded_at"]),
        summary=body["summary"],
        seq=int(r["seq"]),
    )
