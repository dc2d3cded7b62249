"""``DreamsStore`` over the home's DuckDB file: ``dream_proposals`` (one row per version of a
proposal), and the window reads of a pass over ``state_changes`` and ``interactions``."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ...dreams import PENDING, DreamProposal, DreamTarget
from ...identity import Namespace
from .connection import NS_WHERE, DuckDBConnection, ns_of, ns_params
from .schema import utc

_COLUMNS = (
    "proposal_id, version, tenant, scope, owner_id, kind, status, dedup, targets, change, rationale, confidence, "
    "pass_id, decision_id, window_start, window_end, recorded_at, actor, note, applied"
)
_NEWEST = "QUALIFY row_number() OVER (PARTITION BY proposal_id ORDER BY version DESC) = 1"


def _proposal(r: dict[str, Any]) -> DreamProposal:
    return DreamProposal(
        proposal_id=r["proposal_id"],
        version=int(r["version"]),
        tenant=r["tenant"],
        scope=r["scope"],
        owner_id=r["owner_id"],
        kind=r["kind"],
        status=r["status"],
        targets=tuple(DreamTarget(**t) for t in json.loads(r["targets"])),
        change=json.loads(r["change"]),
        rationale=r["rationale"],
        confidence=float(r["confidence"]),
        dedup=r["dedup"],
        pass_id=r["pass_id"],
        decision_id=r["decision_id"],
        window_start=utc(r["window_start"]),
        window_end=utc(r["window_end"]),
        recorded_at=utc(r["recorded_at"]),
        actor=r["actor"],
        note=r["note"],
        applied=tuple(json.loads(r["applied"])),
    )


def proposal_params(p: DreamProposal) -> list[Any]:
    """A proposal's row, in ``_COLUMNS`` order."""
    return (
        [p.proposal_id, p.version, p.tenant, p.scope, p.owner_id, p.kind, p.status, p.dedup]
        + [json.dumps([t.to_dict() for t in p.targets], ensure_ascii=False)]
        + [json.dumps(dict(p.change), ensure_ascii=False, sort_keys=True), p.rationale, p.confidence]
        + [p.pass_id, p.decision_id, p.window_start, p.window_end, p.recorded_at, p.actor, p.note]
        + [json.dumps(list(p.applied))]
    )


class DuckDBDreams:
    # An event's instant, which lives in its body (PostgreSQL reads JSON its own way).
    _event_at = "CAST(json_extract_string(body, '$.recorded_at') AS TIMESTAMPTZ)"

    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db

    def record(self, proposal: DreamProposal) -> None:
        p = proposal
        with self._db.tx() as con:
            con.execute(f"INSERT INTO dream_proposals ({_COLUMNS}) VALUES ({', '.join('?' * 20)})", proposal_params(p))

    def proposals(self, namespace: Namespace, status: str | None = None) -> list[DreamProposal]:
        # In the order they were queued: the first version's instant, then its place in the table.
        rows = self._db.dicts(
            f"SELECT * EXCLUDE (first_at, first_row) FROM (SELECT {_COLUMNS}, "
            "min(recorded_at) OVER (PARTITION BY proposal_id) AS first_at, "
            "min(rowid) OVER (PARTITION BY proposal_id) AS first_row "
            f"FROM dream_proposals WHERE {NS_WHERE} {_NEWEST}) "
            "WHERE ? IS NULL OR status = ? ORDER BY first_at, first_row",
            [*ns_params(namespace), status, status],
        )
        return [_proposal(r) for r in rows]

    def proposal(self, tenant: str, proposal_id: str) -> DreamProposal | None:
        rows = self._db.dicts(
            f"SELECT {_COLUMNS} FROM dream_proposals WHERE tenant = ? AND proposal_id = ? "
            "ORDER BY version DESC LIMIT 1",
            [tenant, proposal_id],
        )
        return _proposal(rows[0]) if rows else None

    def known(self, namespace: Namespace) -> set[str]:
        rows = self._db.rows(f"SELECT DISTINCT dedup FROM dream_proposals WHERE {NS_WHERE}", ns_params(namespace))
        return {r[0] for r in rows}

    def pending_namespaces(self) -> list[Namespace]:
        rows = self._db.rows(
            f"SELECT DISTINCT tenant, scope, owner_id FROM (SELECT tenant, scope, owner_id, status "
            f"FROM dream_proposals {_NEWEST}) WHERE status = ? ORDER BY ALL",
            [PENDING],
        )
        return [ns_of(*r) for r in rows]

    def first_event_seq(self, namespace: Namespace, since: datetime) -> int:
        # An event's instant lives in its body; the window is read once a night, so a scan is fine.
        found = self._db.one(
            f"SELECT min(seq) FROM state_changes WHERE {NS_WHERE} AND {self._event_at} >= ?",
            [*ns_params(namespace), since],
        )
        if found is not None:
            return int(found) - 1
        return int(self._db.one("SELECT coalesce(max(seq), 0) FROM state_changes"))

    def surfaced_since(self, tenant: str, since: datetime) -> set[str]:
        rows = self._db.rows(
            "SELECT refs FROM interactions WHERE tenant = ? AND kind IN ('render', 'context') AND asked_at >= ?",
            [tenant, since],
        )
        return {ref for (refs,) in rows for ref in json.loads(refs)}
