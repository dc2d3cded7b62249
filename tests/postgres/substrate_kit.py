"""What the substrate, webhook and erasure tests of the PostgreSQL authority share: the ports over
one connection (one "process"), state changes and records, and a write of them in an audited
transaction."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Sequence

from memory_core.adapters.postgres.audit_chain import PgAuditChain
from memory_core.adapters.postgres.connection import PgConnection
from memory_core.adapters.postgres.erasure import PgErasure
from memory_core.adapters.postgres.substrate import PgSubstrate
from memory_core.adapters.postgres.webhooks import PgWebhooks
from memory_core.audit import AuditEntry
from memory_core.substrate.decisions import DecisionTrace
from memory_core.substrate.events import FactChange, FieldChange, StateChange
from memory_core.substrate.frames import Frame, NextStep
from memory_core.webhooks import Webhook
from tests.conftest import T0


@dataclass
class Ports:
    db: PgConnection
    audit: PgAuditChain
    webhooks: PgWebhooks
    substrate: PgSubstrate
    erasure: PgErasure


def ports(db: PgConnection, key_dir: Path) -> Ports:
    """The substrate's ports over ``db``, as ``PgHome`` wires them."""
    audit = PgAuditChain(db, None, new_key_dir=key_dir)
    webhooks = PgWebhooks(db, audit)
    return Ports(db, audit, webhooks, PgSubstrate(db, webhooks), PgErasure(db, audit))


def entry(tenant: str = "acme", owner: str = "ana", key: str = "k", op: str = "set") -> AuditEntry:
    return AuditEntry(T0, tenant, "user", owner, key, op, "", None, "agent:a")


def change(
    event_id: str,
    *,
    tenant: str = "acme",
    owner: str = "ana",
    event_type: str = "fact.created",
    key: str = "k",
    frame_id: str | None = None,
    at: datetime = T0,
    text: str = "",
) -> StateChange:
    """A state change of one fact (``text`` goes into its summary, as content the census looks for)."""
    fact = FactChange(f"f-{event_id}", key, None, f"v-{event_id}", (FieldChange("status", None, "active"),))
    return StateChange(
        event_id=event_id,
        event_type=event_type,
        tenant=tenant,
        scope="user",
        owner_id=owner,
        key=key,
        entity=None,
        kind="fact",
        memory_type="general",
        sensitivity="normal",
        actor="agent:a",
        actor_chain=("agent:a",),
        lens_id=None,
        frame_id=frame_id,
        facts=(fact,),
        evidence=(),
        recorded_at=at,
        summary={"note": text} if text else {},
    )


def write(p: Ports, events: Sequence[StateChange], records: Sequence[Any] = (), **who: str) -> int:
    """Events and records in one audited transaction, as the version log writes them."""
    with p.audit.transaction([entry(**who)]) as tx:
        return p.substrate.write(tx, events, records)


def hook(tenant: str, webhook_id: str, *, version: int = 1, status: str = "active") -> Webhook:
    return Webhook(
        tenant, webhook_id, version, "http://127.0.0.1:9/hook", ("memory.written",), "s" * 32, status, T0, "admin"
    )


def frame(frame_id: str, *, tenant: str = "acme", owner: str = "ana", version: int = 1, **changes: Any) -> Frame:
    fields: dict[str, Any] = dict(
        frame_id=frame_id,
        tenant=tenant,
        consumer=f"user:{owner}",
        scope="user",
        owner_id=owner,
        version=version,
        intent="plan",
        goal=f"plan the move of {owner}",
        tags=("move",),
        lenses=(),
        next_steps=(NextStep("pack", "ana", "open"),),
        suppressed=(),
        status="open",
        opened_at=T0 + timedelta(minutes=version),
        changed_at=T0 + timedelta(minutes=version),
    )
    fields.update(changes)
    return Frame(**fields)


def decision(decision_id: str, *, tenant: str = "acme", owner: str = "ana", version: int = 1) -> DecisionTrace:
    return DecisionTrace(
        decision_id=decision_id,
        version=version,
        tenant=tenant,
        scope="user",
        owner_id=owner,
        decision="act",
        rationale=f"{owner} asked for it (v{version})",
        inputs=("fact:f1",),
        outcome=None,
        frame_id=None,
        lens_id=None,
        intent=None,
        tags=(),
        actor="agent:a",
        recorded_at=T0 + timedelta(seconds=version),
    )
