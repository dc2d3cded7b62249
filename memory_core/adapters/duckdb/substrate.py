"""``SubstrateStore`` over DuckDB: the state-change events, lenses, frames, decision traces,
interaction records and receipts of ``schema_substrate``.

Events and versioned records are written by ``write`` inside a write's audited transaction (the
version log's ``apply`` and ``redact`` call it), so an event exists exactly when its write does.
An event row carries its own ledger digest, computed by its insert, as a version row does; the
versioned records are recorded in the ledger by the transaction (``AuditedTx.added``).
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from ...identity import Namespace
from ...substrate.decisions import DecisionTrace, Interaction
from ...substrate.events import StateChange
from ...substrate.frames import Frame
from ...substrate.lenses import Assignment, Capability, Lens, PermissionGroup
from ...substrate.receipts import Receipt, body_of
from .audit_ledger import BOUND, AuditedTx, insert_self_bound
from .connection import DuckDBConnection
from .schema import utc
from .schema_substrate import (
    ASSIGNMENT_COLUMNS,
    DECISION_COLUMNS,
    EVENT_COLUMNS,
    FRAME_COLUMNS,
    GROUP_COLUMNS,
    INTERACTION_COLUMNS,
    LENS_COLUMNS,
    PREFERENCE_COLUMNS,
    RECEIPT_COLUMNS,
)
from .substrate_rows import (
    decision_of,
    decision_params,
    event_of,
    event_params,
    first_seen,
    frame_of,
    frame_params,
    lens_of,
    to_json,
)
from .webhooks import DuckDBWebhooks


def _marks(n: int) -> str:
    return "(" + ", ".join(["?"] * n) + ")"


def _ns_filter(namespaces: Sequence[Namespace]) -> tuple[str, list[Any]]:
    if not namespaces:
        return "FALSE", []
    clause = " OR ".join(["(tenant = ? AND scope = ? AND owner_id = ?)"] * len(namespaces))
    return f"({clause})", [v for ns in namespaces for v in (ns.tenant, ns.scope.value, ns.owner_id)]


def _types_filter(types: Sequence[str]) -> tuple[str, list[Any]]:
    if not types or "*" in types:
        return "TRUE", []
    parts, params = [], []
    for pattern in types:
        if pattern.endswith(".*"):
            parts.append("starts_with(event_type, ?)")
            params.append(pattern[:-1])
        else:
            parts.append("event_type = ?")
            params.append(pattern)
    return "(" + " OR ".join(parts) + ")", params


class DuckDBSubstrate:
    def __init__(self, db: DuckDBConnection, outbox: DuckDBWebhooks | None = None) -> None:
        self._db = db
        self._event_seq = int(db.one("SELECT coalesce(max(seq), 0) FROM state_changes"))
        self.outbox = outbox

    # -- writes, inside an audited transaction --------------------------------------------------

    def write(self, tx: AuditedTx, events: Sequence[StateChange], records: Sequence[Any]) -> int:
        """Insert the events (numbered from the stream's next seq) and the records; answers the
        number of events, which the caller adds to the stream once the transaction committed."""
        for record in records:
            self._write_record(tx, record)
        if not events:
            return 0
        first = self._event_seq + 1
        rows = [event_params(first + i, event, tx.seq) for i, event in enumerate(events)]
        tx.lines.extend(insert_self_bound(tx.con, "state_changes", rows))
        if self.outbox is not None:  # the change webhooks' rows, in the same transaction
            self.outbox.announce(tx, events)
        return len(events)

    def committed(self, count: int) -> None:
        self._event_seq += count

    def _insert(self, tx: AuditedTx, table: str, columns: Sequence[str], values: Sequence[Any], where: str) -> None:
        tx.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES {_marks(len(columns))}", values)
        key_values = [values[list(columns).index(c)] for c in BOUND[table].key]
        tx.added(table, where, key_values)

    def _write_record(self, tx: AuditedTx, r: Any) -> None:
        if isinstance(r, Lens):
            self._insert(
                tx,
                "lens_contracts",
                LENS_COLUMNS,
                [r.tenant, r.lens_id, r.version, to_json(r.contract()), r.defined_at, r.defined_by],
                "tenant = ? AND lens_id = ? AND version = ?",
            )
            self._insert(
                tx,
                "lens_preferences",
                PREFERENCE_COLUMNS,
                [r.tenant, r.lens_id, r.version, to_json(r.preferences.to_dict()), r.defined_at, r.defined_by],
                "tenant = ? AND lens_id = ? AND version = ?",
            )
        elif isinstance(r, Assignment):
            self._insert(
                tx,
                "lens_assignments",
                ASSIGNMENT_COLUMNS,
                [r.tenant, r.lens_id, r.consumer, r.version, r.assigned, r.at, r.actor],
                "tenant = ? AND lens_id = ? AND consumer = ? AND version = ?",
            )
        elif isinstance(r, PermissionGroup):
            self._insert(
                tx,
                "permission_groups",
                GROUP_COLUMNS,
                [
                    r.tenant,
                    r.name,
                    r.version,
                    to_json(sorted(p.value for p in r.permissions)),
                    r.defined_at,
                    r.defined_by,
                ],
                "tenant = ? AND group_name = ? AND version = ?",
            )
        elif isinstance(r, Frame):
            self._insert(tx, "frames", FRAME_COLUMNS, frame_params(r), "tenant = ? AND frame_id = ? AND version = ?")
        elif isinstance(r, DecisionTrace):
            self._insert(
                tx,
                "decision_traces",
                DECISION_COLUMNS,
                decision_params(r),
                "tenant = ? AND decision_id = ? AND version = ?",
            )
        else:
            raise TypeError(f"not a substrate record: {type(r).__name__}")

    # -- reads -------------------------------------------------------------------------------------

    def last_event_seq(self) -> int:
        return self._event_seq

    def lenses(self, tenant: str) -> list[Lens]:
        rows = self._db.rows(
            "SELECT c.lens_id, c.version, c.contract, p.preferences, c.defined_at, c.defined_by "
            "FROM lens_contracts c LEFT JOIN lens_preferences p "
            "ON p.tenant = c.tenant AND p.lens_id = c.lens_id AND p.version = c.version "
            "WHERE c.tenant = ? QUALIFY row_number() OVER (PARTITION BY c.lens_id ORDER BY c.version DESC) = 1 "
            "ORDER BY c.lens_id",
            [tenant],
        )
        return [lens_of(tenant, r) for r in rows]

    def assignments(self, tenant: str, consumer: str | None = None) -> list[Assignment]:
        rows = self._db.rows(
            "SELECT lens_id, consumer, version, assigned, assigned_at, actor FROM lens_assignments WHERE tenant = ? "
            + ("AND consumer = ? " if consumer is not None else "")
            + "QUALIFY row_number() OVER (PARTITION BY lens_id, consumer ORDER BY version DESC) = 1 "
            "ORDER BY consumer, lens_id",
            [tenant, *([consumer] if consumer is not None else [])],
        )
        return [Assignment(tenant, lens, who, int(n), bool(on), utc(at), actor) for lens, who, n, on, at, actor in rows]

    def permission_groups(self, tenant: str) -> dict[str, frozenset[Capability]]:
        rows = self._db.rows(
            "SELECT group_name, permissions FROM permission_groups WHERE tenant = ? "
            "QUALIFY row_number() OVER (PARTITION BY group_name ORDER BY version DESC) = 1",
            [tenant],
        )
        return {name: frozenset(Capability(p) for p in json.loads(perms)) for name, perms in rows}

    def group_versions(self, tenant: str) -> dict[str, int]:
        rows = self._db.rows(
            "SELECT group_name, max(version) FROM permission_groups WHERE tenant = ? GROUP BY 1", [tenant]
        )
        return {name: int(version) for name, version in rows}

    def frame_versions(self, tenant: str, frame_id: str) -> list[Frame]:
        rows = self._db.dicts(
            f"SELECT {', '.join(FRAME_COLUMNS)} FROM frames WHERE tenant = ? AND frame_id = ? ORDER BY version",
            [tenant, frame_id],
        )
        return [frame_of(r) for r in rows]

    def frames_by_id(self, tenant: str, frame_ids: Sequence[str]) -> list[Frame]:
        if not frame_ids:
            return []
        rows = self._db.dicts(
            f"SELECT {', '.join(FRAME_COLUMNS)} FROM frames WHERE tenant = ? AND list_contains(?, frame_id) "
            "QUALIFY row_number() OVER (PARTITION BY frame_id ORDER BY version DESC) = 1",
            [tenant, list(frame_ids)],
        )
        return [frame_of(r) for r in rows]

    def frames(self, tenant: str, consumer: str, status: str | None = None) -> list[Frame]:
        rows = self._db.dicts(
            f"SELECT {', '.join(FRAME_COLUMNS)} FROM frames WHERE tenant = ? AND consumer = ? "
            "QUALIFY row_number() OVER (PARTITION BY frame_id ORDER BY version DESC) = 1 "
            "ORDER BY opened_at DESC, frame_id",
            [tenant, consumer],
        )
        found = [frame_of(r) for r in rows]
        return [f for f in found if status is None or f.status == status]

    def decisions(self, namespaces: Sequence[Namespace]) -> list[DecisionTrace]:
        where, params = _ns_filter(namespaces)
        rows = self._db.dicts(
            f"SELECT {', '.join(DECISION_COLUMNS)} FROM decision_traces WHERE {where} "
            "QUALIFY row_number() OVER (PARTITION BY decision_id ORDER BY version DESC) = 1 "
            "ORDER BY recorded_at, decision_id",
            params,
        )
        return [decision_of(r) for r in rows]

    def decision(self, tenant: str, decision_id: str) -> DecisionTrace | None:
        rows = self._db.dicts(
            f"SELECT {', '.join(DECISION_COLUMNS)} FROM decision_traces WHERE tenant = ? AND decision_id = ? "
            "ORDER BY version DESC LIMIT 1",
            [tenant, decision_id],
        )
        return decision_of(rows[0]) if rows else None

    def events(
        self,
        namespaces: Sequence[Namespace],
        since: int,
        limit: int,
        types: Sequence[str] = (),
    ) -> list[StateChange]:
        where, params = _ns_filter(namespaces)
        typed, type_params = _types_filter(types)
        rows = self._db.dicts(
            f"SELECT {', '.join(EVENT_COLUMNS)} FROM state_changes WHERE {where} AND {typed} AND seq > ? "
            "ORDER BY seq LIMIT ?",
            [*params, *type_params, since, limit],
        )
        return [event_of(r) for r in rows]

    def footprint(self, tenant: str, frame_id: str) -> list[str]:
        rows = self._db.dicts(
            f"SELECT {', '.join(EVENT_COLUMNS)} FROM state_changes WHERE tenant = ? AND frame_id = ? ORDER BY seq",
            [tenant, frame_id],
        )
        out: dict[str, None] = {}
        for event in map(event_of, rows):
            if event.event_type.startswith("decision."):
                out.setdefault(event.key, None)  # a decision's event key is its ref
            for fact in event.facts:
                out.setdefault(f"{event.kind or 'fact'}:{fact.fact_id}", None)
            for relation in event.summary.get("graph", {}).get("observed", ()):
                out.setdefault(relation, None)
        return list(out)

    def surfaced(self, tenant: str, frame_id: str) -> list[str]:
        rows = self._db.rows(
            "SELECT refs FROM interactions WHERE tenant = ? AND frame_id = ? AND kind IN ('render', 'context') "
            "ORDER BY asked_at, rowid",
            [tenant, frame_id],
        )
        return first_seen(rows)

    def interaction(self, tenant: str, interaction_id: str) -> Interaction | None:
        rows = self._db.dicts(
            f"SELECT {', '.join(INTERACTION_COLUMNS)} FROM interactions WHERE tenant = ? AND interaction_id = ?",
            [tenant, interaction_id],
        )
        if not rows:
            return None
        r = rows[0]
        return Interaction(
            r["interaction_id"],
            r["tenant"],
            r["consumer"],
            r["kind"],
            tuple(json.loads(r["lenses"])),
            r["frame_id"],
            r["query"],
            tuple(json.loads(r["refs"])),
            r["receipt_id"],
            r["feedback"],
            utc(r["asked_at"]),
            json.loads(r["detail"]),
        )

    def record_answer(self, interaction: Interaction, receipt: Receipt | None) -> None:
        i = interaction
        with self._db.tx() as con:
            columns = ", ".join(INTERACTION_COLUMNS)
            con.execute(
                f"INSERT INTO interactions ({columns}) VALUES {_marks(len(INTERACTION_COLUMNS))}",
                [
                    i.tenant,
                    i.interaction_id,
                    i.consumer,
                    i.kind,
                    to_json(list(i.lenses)),
                    i.frame_id,
                    i.query,
                    to_json(list(i.refs)),
                    i.receipt_id,
                    i.feedback,
                    i.at,
                    to_json(i.detail),
                ],
            )
            if receipt is not None:
                r = receipt
                con.execute(
                    f"INSERT INTO receipts ({', '.join(RECEIPT_COLUMNS)}) VALUES {_marks(len(RECEIPT_COLUMNS))}",
                    [r.tenant, r.receipt_id, r.kind, r.consumer, r.frame_id, r.issued_at, r.store_seq, r.key_id]
                    + [to_json(body_of(r))],
                )
