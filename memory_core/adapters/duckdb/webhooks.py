"""``WebhookStore`` over the home's DuckDB file: the per-tenant registry (versioned, audited and
bound by the chain), the outbox a write appends to inside its own transaction, and the delivery
attempts (leases, outcomes), appended and never rewritten."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Sequence

from ...audit import AuditEntry
from ...substrate.events import StateChange
from ...webhooks import OutboxEvent, Webhook, announcements
from .audit_chain import AuditChain
from .audit_ledger import AuditedTx
from .connection import DuckDBConnection, StoreCache
from .schema import utc
from .schema_erasure import WEBHOOK_COLUMNS

_OUTBOX = ("seq", "event_id", "webhook_id", "event_type", "tenant", "scope", "owner_id", "body", "occurred_at")
_SETTLED = ("delivered", "dead")

# Each outbox row with its newest attempt: the outcome and when it may be tried again.
_STATE = """
WITH latest AS (
    SELECT event_id, webhook_id, outcome, next_attempt_at, attempt,
           count(*) FILTER (WHERE outcome = 'pending') OVER (PARTITION BY event_id, webhook_id) AS failures
    FROM webhook_deliveries
    QUALIFY row_number() OVER (PARTITION BY event_id, webhook_id ORDER BY rowid DESC) = 1)
SELECT o.seq, o.event_id, o.webhook_id, o.event_type, o.tenant, o.scope, o.owner_id, o.body, o.occurred_at,
       l.outcome, l.next_attempt_at, coalesce(l.attempt, 0) AS attempts, coalesce(l.failures, 0) AS failures
FROM webhook_outbox o LEFT JOIN latest l ON l.event_id = o.event_id AND l.webhook_id = o.webhook_id
"""


def _webhook(row: Sequence[Any]) -> Webhook:
    r = dict(zip(WEBHOOK_COLUMNS, row))
    return Webhook(
        tenant=r["tenant"],
        webhook_id=r["webhook_id"],
        version=int(r["version"]),
        url=r["url"],
        events=tuple(json.loads(r["events"])),
        secret=r["secret"],
        status=r["status"],
        changed_at=utc(r["changed_at"]),
        actor=r["actor"],
    )


class DuckDBWebhooks:
    def __init__(self, db: DuckDBConnection, audit: AuditChain) -> None:
        self._db = db
        self._audit = audit
        self._active = StoreCache(db, lambda: tuple(w for w in self.webhooks() if w.status == "active"))
        self._seq = int(db.one("SELECT coalesce(max(seq), 0) FROM webhook_outbox"))

    # -- the registry ----------------------------------------------------------------------------

    def put(self, webhook: Webhook, audit: AuditEntry) -> None:
        """Append a webhook's next version (registered, secret rotated, removed), audited."""
        w = webhook
        values = [w.tenant, w.webhook_id, w.version, w.url, json.dumps(list(w.events)), w.secret, w.status]
        values += [w.changed_at, w.actor]
        with self._audit.transaction([audit]) as tx:
            tx.execute(f"INSERT INTO webhooks ({', '.join(WEBHOOK_COLUMNS)}) VALUES ({', '.join('?' * 9)})", values)
            tx.added("webhooks", "tenant = ? AND webhook_id = ? AND version = ?", [w.tenant, w.webhook_id, w.version])
        self._active.drop()

    def webhooks(self, tenant: str | None = None) -> list[Webhook]:
        """The newest version of every webhook (of a tenant), removed ones included."""
        rows = self._db.rows(
            f"SELECT {', '.join(WEBHOOK_COLUMNS)} FROM webhooks WHERE ? IS NULL OR tenant = ? "
            "QUALIFY row_number() OVER (PARTITION BY tenant, webhook_id ORDER BY version DESC) = 1 "
            "ORDER BY tenant, changed_at, webhook_id",
            [tenant, tenant],
        )
        return [_webhook(r) for r in rows]

    def active(self) -> tuple[Webhook, ...]:
        return self._active.get()

    def forget(self) -> None:
        """Drop the registry's copy (an erasure deleted webhooks)."""
        self._active.drop()

    # -- the outbox ----------------------------------------------------------------------------

    def announce(self, tx: AuditedTx, changes: Sequence[StateChange]) -> int:
        """Append, inside the write's transaction, the outbox rows its changes make. A tenant
        with no webhook pays one look at the registry's copy and no insert."""
        hooks = self.active()
        return self.append(tx.con, announcements(changes, hooks)) if hooks else 0

    def append(self, con: Any, events: Sequence[OutboxEvent]) -> int:
        if not events:
            return 0
        first = self._seq + 1
        rows = [
            [first + i, e.event_id, e.webhook_id, e.event_type, e.tenant, e.scope, e.owner_id, e.body, e.occurred_at]
            for i, e in enumerate(events)
        ]
        marks = ", ".join([f"({', '.join('?' * len(_OUTBOX))})"] * len(rows))
        con.execute(f"INSERT INTO webhook_outbox ({', '.join(_OUTBOX)}) VALUES {marks}", [v for r in rows for v in r])
        # Under the store's lock. A write that rolls back leaves a gap in the numbers, never a
        # duplicate: the order of what committed is all a delivery needs.
        self._seq += len(rows)
        return len(rows)

    def append_committed(self, events: Sequence[OutboxEvent]) -> int:
        """Append outbox rows in a transaction of their own (the erasure's ``memory.erased``),
        leaving out any already there (the same event for the same webhook)."""
        with self._db.tx() as con:
            held = {
                (e, w)
                for e, w in con.execute(
                    "SELECT event_id, webhook_id FROM webhook_outbox WHERE list_contains(?, event_id)",
                    [sorted({e.event_id for e in events})],
                ).fetchall()
            }
            return self.append(con, [e for e in events if (e.event_id, e.webhook_id) not in held])

    # -- deliveries ----------------------------------------------------------------------------

    def heads(self, per_webhook: int = 1) -> list[dict[str, Any]]:
        """Each webhook's oldest events not settled (delivered or dead), up to ``per_webhook`` of
        them, in order: only the first may be sent, then the next, so a webhook's events arrive
        in order."""
        cols = ("seq", "event_id", "webhook_id", "event_type", "tenant", "scope", "owner_id", "body")
        cols += ("occurred_at", "outcome", "next_attempt_at", "attempts", "failures")
        sql = (
            f"SELECT * FROM ({_STATE}) WHERE outcome IS NULL OR outcome NOT IN {_SETTLED!r} "
            "QUALIFY row_number() OVER (PARTITION BY webhook_id ORDER BY seq) <= ? ORDER BY seq"
        )
        return [dict(zip(cols, r)) for r in self._db.rows(sql, [per_webhook])]

    def unsettled(self) -> list[dict[str, Any]]:
        """Every event not delivered or dead (for the deadline and removed webhooks)."""
        sql = (
            f"SELECT event_id, webhook_id, occurred_at, attempts, outcome, next_attempt_at FROM ({_STATE}) "
            f"WHERE outcome IS NULL OR outcome NOT IN {_SETTLED!r} ORDER BY seq"
        )
        cols = ("event_id", "webhook_id", "occurred_at", "attempts", "outcome", "next_attempt_at")
        return [dict(zip(cols, r)) for r in self._db.rows(sql)]

    def claim(self, event_id: str, webhook_id: str, worker: str, now: datetime, lease_until: datetime) -> int | None:
        """Lease one event to ``worker`` if it is still due (nobody delivered, settled or leased
        it since it was read): answers the attempt's number, or None."""
        with self._db.tx() as con:
            if not con.execute(
                "SELECT count(*) FROM webhook_outbox WHERE event_id = ? AND webhook_id = ?", [event_id, webhook_id]
            ).fetchall()[0][0]:
                return None  # erased since
            found = con.execute(
                "SELECT outcome, next_attempt_at, attempt FROM webhook_deliveries WHERE event_id = ? "
                "AND webhook_id = ? ORDER BY rowid DESC LIMIT 1",
                [event_id, webhook_id],
            ).fetchall()
            outcome, next_at, attempts = found[0] if found else (None, None, 0)
            if outcome in _SETTLED or (outcome is not None and next_at is not None and utc(next_at) > now):
                return None
            attempt = int(attempts) + 1
            con.execute(
                "INSERT INTO webhook_deliveries VALUES (?, ?, ?, 'leased', ?, ?, ?, NULL, NULL)",
                [event_id, webhook_id, attempt, worker, now, lease_until],
            )
        return attempt

    def record(
        self,
        event_id: str,
        webhook_id: str,
        attempt: int,
        outcome: str,
        worker: str,
        at: datetime,
        next_attempt_at: datetime | None = None,
        status_code: int | None = None,
        error: str | None = None,
    ) -> None:
        with self._db.tx() as con:
            con.execute(
                "INSERT INTO webhook_deliveries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [event_id, webhook_id, attempt, outcome, worker, at, next_attempt_at, status_code, error],
            )

    def deliveries(self, webhook_id: str | None = None) -> list[dict[str, Any]]:
        """Every attempt (leases included), oldest first."""
        return self._db.dicts(
            "SELECT event_id, webhook_id, attempt, outcome, worker, attempted_at, next_attempt_at, status_code, error "
            "FROM webhook_deliveries WHERE ? IS NULL OR webhook_id = ? ORDER BY rowid",
            [webhook_id, webhook_id],
        )

    def outbox(self, webhook_id: str | None = None) -> list[OutboxEvent]:
        rows = self._db.rows(
            f"SELECT {', '.join(_OUTBOX)} FROM webhook_outbox WHERE ? IS NULL OR webhook_id = ? ORDER BY seq",
            [webhook_id, webhook_id],
        )
        return [OutboxEvent(r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8].astimezone(UTC), int(r[0])) for r in rows]
