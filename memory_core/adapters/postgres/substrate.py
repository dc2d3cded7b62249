"""``SubstrateStore`` over a PostgreSQL authority: the state-change events, lenses, frames,
decision traces, interaction records and receipts of ``schema_substrate``.

Events and versioned records are written by ``write`` inside a write's audited transaction (the
version log's ``apply`` and ``redact`` call it), so an event exists exactly when its write does.
Its seq is read from the table in that transaction, which holds the write lock until it
committed: several replicas number one stream, in commit order, with no duplicate and no gap (a
write that rolls back hands its numbers out again). The seq never goes back either: an erasure
that deletes the newest events raises a floor in ``meta`` first (``EVENT_SEQ_FLOOR``), so a
reader's watermark never skips an event numbered again, and ``last_event_seq`` answers the
stream's high-water mark, as a DuckDB home's counter does after such an erasure.

The class is the DuckDB one where its statements are plain SQL that PostgreSQL runs as written
(``group_versions``, ``frame_versions``, ``decision``, ``events``, ``footprint``, ``interaction``,
``record_answer`` and the records' inserts): it overrides the numbering and the reads written
with ``QUALIFY``, ``list_contains`` or ``rowid``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Sequence

from ...errors import InternalError
from ...identity import Namespace
from ...substrate.decisions import DecisionTrace
from ...substrate.events import StateChange
from ...substrate.frames import Frame
from ...substrate.lenses import Assignment, Capability, Lens
from ..duckdb.schema import utc
from ..duckdb.schema_substrate import DECISION_COLUMNS, FRAME_COLUMNS
from ..duckdb.substrate import DuckDBSubstrate, _ns_filter
from ..duckdb.substrate_rows import decision_of, event_params, first_seen, frame_of, lens_of
from .audit_ledger import AuditedTx, insert_self_bound
from .connection import PgConnection

if TYPE_CHECKING:
    from .webhooks import PgWebhooks

# The highest event seq an erasure deleted (``meta``): numbering goes on above it.
EVENT_SEQ_FLOOR = "state_changes_seq_floor"
_NEXT_SEQ = (
    "SELECT greatest(coalesce(max(seq), 0), coalesce((SELECT value::bigint FROM meta WHERE name = ?), 0)) "
    "FROM state_changes"
)


def _newest(table: str, columns: str, partition: str, where: str, order: str) -> str:
    """The newest version per ``partition`` of the rows matching ``where``, ordered by ``order``
    (DuckDB's ``QUALIFY row_number() ... = 1`` as ``DISTINCT ON``)."""
    return (
        f"SELECT * FROM (SELECT DISTINCT ON ({partition}) {columns} FROM {table} WHERE {where} "
        f"ORDER BY {partition}, version DESC) newest ORDER BY {order}"
    )


class PgSubstrate(DuckDBSubstrate):
    """``SubstrateStore`` over the authority's pool."""

    def __init__(self, db: PgConnection, outbox: "PgWebhooks | None" = None) -> None:
        self._db = db  # type: ignore[assignment]  # the same reads and transactions
        self.outbox = outbox  # type: ignore[assignment]

    # -- writes, inside an audited transaction --------------------------------------------------

    def write(self, tx: AuditedTx, events: Sequence[StateChange], records: Sequence[Any]) -> int:
        """Insert the events (numbered from the stream's next seq) and the records; answers the
        number of events."""
        for record in records:
            self._write_record(tx, record)
        if not events:
            return 0
        if not self._db.lock.held_here:
            raise InternalError("events are numbered only under the store's write lock")
        first = int(tx.execute(_NEXT_SEQ, [EVENT_SEQ_FLOOR]).fetchone()[0]) + 1
        rows = [event_params(first + i, event, tx.seq) for i, event in enumerate(events)]
        tx.lines.extend(insert_self_bound(tx.con, "state_changes", rows))
        if self.outbox is not None:  # the change webhooks' rows, in the same transaction
            self.outbox.announce(tx, events)
        return len(events)

    def committed(self, count: int) -> None:
        """Nothing to count: the next seq is read from the authority (the DuckDB port's hook)."""

    # -- reads -------------------------------------------------------------------------------------

    def last_event_seq(self) -> int:
        return int(self._db.one(_NEXT_SEQ, [EVENT_SEQ_FLOOR]))

    def lenses(self, tenant: str) -> list[Lens]:
        rows = self._db.rows(
            "SELECT * FROM (SELECT DISTINCT ON (c.lens_id) c.lens_id, c.version, c.contract, p.preferences, "
            "c.defined_at, c.defined_by FROM lens_contracts c LEFT JOIN lens_preferences p "
            "ON p.tenant = c.tenant AND p.lens_id = c.lens_id AND p.version = c.version "
            "WHERE c.tenant = ? ORDER BY c.lens_id, c.version DESC) newest ORDER BY lens_id",
            [tenant],
        )
        return [lens_of(tenant, r) for r in rows]

    def assignments(self, tenant: str, consumer: str | None = None) -> list[Assignment]:
        where = "tenant = ?" + (" AND consumer = ?" if consumer is not None else "")
        rows = self._db.rows(
            _newest(
                "lens_assignments",
                "lens_id, consumer, version, assigned, assigned_at, actor",
                "lens_id, consumer",
                where,
                "consumer, lens_id",
            ),
            [tenant, *([consumer] if consumer is not None else [])],
        )
        return [Assignment(tenant, lens, who, int(n), bool(on), utc(at), actor) for lens, who, n, on, at, actor in rows]

    def permission_groups(self, tenant: str) -> dict[str, frozenset[Capability]]:
        rows = self._db.rows(
            _newest("permission_groups", "group_name, version, permissions", "group_name", "tenant = ?", "group_name"),
            [tenant],
        )
        return {name: frozenset(Capability(p) for p in json.loads(perms)) for name, _, perms in rows}

    def frames_by_id(self, tenant: str, frame_ids: Sequence[str]) -> list[Frame]:
        if not frame_ids:
            return []
        rows = self._db.dicts(
            _newest("frames", ", ".join(FRAME_COLUMNS), "frame_id", "tenant = ? AND frame_id = ANY(?)", "frame_id"),
            [tenant, list(frame_ids)],
        )
        return [frame_of(r) for r in rows]

    def frames(self, tenant: str, consumer: str, status: str | None = None) -> list[Frame]:
        rows = self._db.dicts(
            _newest(
                "frames",
                ", ".join(FRAME_COLUMNS),
                "frame_id",
                "tenant = ? AND consumer = ?",
                "opened_at DESC, frame_id",
            ),
            [tenant, consumer],
        )
        found = [frame_of(r) for r in rows]
        return [f for f in found if status is None or f.status == status]

    def decisions(self, namespaces: Sequence[Namespace]) -> list[DecisionTrace]:
        where, params = _ns_filter(namespaces)
        rows = self._db.dicts(
            _newest("decision_traces", ", ".join(DECISION_COLUMNS), "decision_id", where, "recorded_at, decision_id"),
            params,
        )
        return [decision_of(r) for r in rows]

    def surfaced(self, tenant: str, frame_id: str) -> list[str]:
        # Where two answers share an instant (a fixed clock), the physical order of this
        # append-only table (``ctid``) stands for DuckDB's ``rowid``: the order they were kept in.
        rows = self._db.rows(
            "SELECT refs FROM interactions WHERE tenant = ? AND frame_id = ? AND kind IN ('render', 'context') "
            "ORDER BY asked_at, ctid",
            [tenant, frame_id],
        )
        return first_seen(rows)
