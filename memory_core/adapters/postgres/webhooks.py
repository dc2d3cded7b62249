"""``WebhookStore`` over a PostgreSQL authority: the per-tenant registry (versioned, audited and
bound by the chain), the outbox a write appends to inside its own transaction, and the delivery
attempts (leases, outcomes), appended and never rewritten.

Unlike a DuckDB home this store keeps no copy of the registry: another replica may register or
remove a webhook at any moment, so a write reads the active webhooks of its own tenants inside
its transaction (one indexed look, no insert when none takes its events). Outbox seqs come from
the table under the write lock; a claim serializes on the outbox row (``FOR UPDATE``), so two
workers in two processes never lease one event at once.

The class is the DuckDB one where its statements run on PostgreSQL as written (``put``,
``record``): it overrides the registry's reads, the numbering, and what DuckDB orders by
``rowid`` or filters with ``QUALIFY`` and ``list_contains``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Sequence

from ...errors import InternalError
from ...substrate.events import StateChange
from ...webhooks import OutboxEvent, Webhook, announcements
from ..duckdb.schema import utc
from ..duckdb.schema_erasure import WEBHOOK_COLUMNS
from ..duckdb.webhooks import _OUTBOX, _SETTLED, DuckDBWebhooks, _webhook
from .connection import PgConnection

if TYPE_CHECKING:
    from .audit_chain import PgAuditChain

# A pair's attempts, newest first. A DuckDB home orders them by rowid; here by what they say: a
# higher attempt is newer, an attempt's outcome follows its lease, and the physical order
# (``ctid``, insertion order for this append-only table) breaks what is left.
_NEWEST = "attempt DESC, (outcome = 'leased') ASC, attempted_at DESC, ctid DESC"

# Each outbox row with its newest attempt: the outcome and when it may be tried again.
_STATE = f"""
WITH latest AS (
    SELECT DISTINCT ON (event_id, webhook_id) event_id, webhook_id, outcome, next_attempt_at, attempt,
           count(*) FILTER (WHERE outcome = 'pending') OVER (PARTITION BY event_id, webhook_id) AS failures
    FROM webhook_deliveries
    ORDER BY event_id, webhook_id, {_NEWEST})
SELECT o.seq, o.event_id, o.webhook_id, o.event_type, o.tenant, o.scope, o.owner_id, o.body, o.occurred_at,
       l.outcome, l.next_attempt_at, coalesce(l.attempt, 0) AS attempts, coalesce(l.failures, 0) AS failures
FROM webhook_outbox o LEFT JOIN latest l ON l.event_id = o.event_id AND l.webhook_id = o.webhook_id
"""
_UNSETTLED = f"outcome IS NULL OR outcome NOT IN {_SETTLED!r}"
_NEWEST_VERSION = (
    f"SELECT DISTINCT ON (tenant, webhook_id) {', '.join(WEBHOOK_COLUMNS)} FROM webhooks "
    "WHERE {where} ORDER BY tenant, webhook_id, version DESC"
)


class _NoCopy:
    """Where the DuckDB port keeps its copy of the active webhooks: here nothing to drop."""

    def drop(self) -> None:
        pass


class PgWebhooks(DuckDBWebhooks):
    """``WebhookStore`` (and the substrate's outbox) over the authority's pool."""

    def __init__(self, db: PgConnection, audit: PgAuditChain) -> None:
        self._db = db  # type: ignore[assignment]  # the same reads and transactions
        self._audit = audit  # type: ignore[assignment]
        self._active = _NoCopy()  # type: ignore[assignment]

    # -- the registry ----------------------------------------------------------------------------

    def webhooks(self, tenant: str | None = None) -> list[Webhook]:
        """The newest version of every webhook (of a tenant), removed ones included."""
        rows = self._db.rows(
            f"SELECT * FROM ({_NEWEST_VERSION.format(where='?::text IS NULL OR tenant = ?')}) w "
            "ORDER BY tenant, changed_at, webhook_id",
            [tenant, tenant],
        )
        return [_webhook(r) for r in rows]

    def active(self, tenants: Sequence[str] | None = None) -> tuple[Webhook, ...]:
        """The active webhooks (of these tenants), read from the authority each time."""
        where, params = ("TRUE", []) if tenants is None else ("tenant = ANY(?)", [list(tenants)])
        rows = self._db.rows(
            f"SELECT * FROM ({_NEWEST_VERSION.format(where=where)}) w WHERE status = 'active' "
            "ORDER BY tenant, changed_at, webhook_id",
            params,
        )
        return tuple(_webhook(r) for r in rows)

    # -- the outbox ----------------------------------------------------------------------------

    def announce(self, tx: Any, changes: Sequence[StateChange]) -> int:
        """Append, inside the write's transaction, the outbox rows its changes make. The registry
        is read in that transaction, so a webhook registered by another replica before it takes
        the change's event."""
        if not changes:
            return 0
        hooks = self.active(sorted({c.tenant for c in changes}))
        return self.append(tx, announcements(changes, hooks)) if hooks else 0

    def append(self, tx: Any, events: Sequence[OutboxEvent]) -> int:
        """Insert outbox rows through ``tx`` (anything with ``execute``), numbered after the
        highest seq stored. Under the write lock, which the caller holds: the numbers follow commit
        order. A write that rolls back leaves nothing, and its numbers are handed out again."""
        if not events:
            return 0
        if not self._db.lock.held_here:
            raise InternalError("the webhook outbox is appended to only under the store's write lock")
        first = int(tx.execute("SELECT coalesce(max(seq), 0) FROM webhook_outbox").fetchone()[0]) + 1
        rows = [
            [first + i, e.event_id, e.webhook_id, e.event_type, e.tenant, e.scope, e.owner_id, e.body, e.occurred_at]
            for i, e in enumerate(events)
        ]
        marks = ", ".join([f"({', '.join('?' * len(_OUTBOX))})"] * len(rows))
        tx.execute(f"INSERT INTO webhook_outbox ({', '.join(_OUTBOX)}) VALUES {marks}", [v for r in rows for v in r])
        return len(rows)

    def append_committed(self, events: Sequence[OutboxEvent]) -> int:
        """Append outbox rows in a transaction of their own (the erasure's ``memory.erased``),
        leaving out any already there (the same event for the same webhook)."""
        if not events:
            return 0
        with self._db.lock, self._db.tx() as tx:
            held = {
                (e, w)
                for e, w in tx.execute(
                    "SELECT event_id, webhook_id FROM webhook_outbox WHERE event_id = ANY(?)",
                    [sorted({e.event_id for e in events})],
                ).fetchall()
            }
            return self.append(tx, [e for e in events if (e.event_id, e.webhook_id) not in held])

    # -- deliveries ----------------------------------------------------------------------------

    def heads(self, per_webhook: int = 1) -> list[dict[str, Any]]:
        """Each webhook's oldest events not settled (delivered or dead), up to ``per_webhook`` of
        them, in order: only the first may be sent, then the next, so a webhook's events arrive
        in order."""
        cols = ("seq", "event_id", "webhook_id", "event_type", "tenant", "scope", "owner_id", "body")
        cols += ("occurred_at", "outcome", "next_attempt_at", "attempts", "failures")
        statement = (
            f"SELECT {', '.join(cols)} FROM (SELECT s.*, row_number() OVER (PARTITION BY webhook_id ORDER BY seq) "
            f"AS n FROM ({_STATE}) s WHERE {_UNSETTLED}) h WHERE n <= ? ORDER BY seq"
        )
        return [dict(zip(cols, r)) for r in self._db.rows(statement, [per_webhook])]

    def unsettled(self) -> list[dict[str, Any]]:
        """Every event not delivered or dead (for the deadline and removed webhooks)."""
        cols = ("event_id", "webhook_id", "occurred_at", "attempts", "outcome", "next_attempt_at")
        statement = f"SELECT {', '.join(cols)} FROM ({_STATE}) s WHERE {_UNSETTLED} ORDER BY seq"
        return [dict(zip(cols, r)) for r in self._db.rows(statement)]

    def claim(self, event_id: str, webhook_id: str, worker: str, now: datetime, lease_until: datetime) -> int | None:
        """Lease one event to ``worker`` if it is still due (nobody delivered, settled or leased
        it since it was read): answers the attempt's number, or None. The outbox row's lock
        makes a second claimer (any process) wait, then read the first one's lease."""
        with self._db.tx() as tx:
            locked = tx.execute(
                "SELECT 1 FROM webhook_outbox WHERE event_id = ? AND webhook_id = ? FOR UPDATE",
                [event_id, webhook_id],
            ).fetchall()
            if not locked:
                return None  # erased since
            found = tx.execute(
                "SELECT outcome, next_attempt_at, attempt FROM webhook_deliveries WHERE event_id = ? "
                f"AND webhook_id = ? ORDER BY {_NEWEST} LIMIT 1",
                [event_id, webhook_id],
            ).fetchall()
            outcome, next_at, attempts = found[0] if found else (None, None, 0)
            if outcome in _SETTLED or (outcome is not None and next_at is not None and utc(next_at) > now):
                return None
            attempt = int(attempts) + 1
            tx.execute(
                "INSERT INTO webhook_deliveries VALUES (?, ?, ?, 'leased', ?, ?, ?, NULL, NULL)",
                [event_id, webhook_id, attempt, worker, now, lease_until],
            )
        return attempt

    def deliveries(self, webhook_id: str | None = None) -> list[dict[str, Any]]:
        """Every attempt (leases included), oldest first (insertion order where the times tie)."""
        return self._db.dicts(
            "SELECT event_id, webhook_id, attempt, outcome, worker, attempted_at, next_attempt_at, status_code, error "
            "FROM webhook_deliveries WHERE ?::text IS NULL OR webhook_id = ? ORDER BY attempted_at, ctid",
            [webhook_id, webhook_id],
        )

    def outbox(self, webhook_id: str | None = None) -> list[OutboxEvent]:
        rows = self._db.rows(
            f"SELECT {', '.join(_OUTBOX)} FROM webhook_outbox WHERE ?::text IS NULL OR webhook_id = ? ORDER BY seq",
            [webhook_id, webhook_id],
        )
        return [OutboxEvent(r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8].astimezone(UTC), int(r[0])) for r in rows]
