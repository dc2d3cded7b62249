"""``ReflectStore`` over the home's DuckDB file: ``reflect_cursors`` (one row per tenant and
phase), ``reflect_inputs`` (one row per input read), ``reflect_claims`` (one row per claim,
updated in place as the phases decide), and a written claim's lineage in ``belief_sources``
(``reflected_from``, the claim's id as its run)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Sequence

from ...reflect import Claim, Plan, Source
from ...reflect.model import WRITTEN, connections_json, connections_of
from ...substrate.events import StateChange
from .connection import DuckDBConnection
from .schema import utc
from .schema_substrate import EVENT_COLUMNS
from .substrate_rows import event_of

_CLAIM = (
    "claim_id, tenant, scope, owner_id, source_ref, source_kind, source_seq, source_fact, source_key, ordinal, "
    "text, key, memory_type, subject, observed_at, relations, whole, status, connections, plan, plan_action, "
    "plan_why, reason, fact_id, fact_key, outcome, applying_from, archived"
)
_DECIDED = (
    "status",
    "connections",
    "plan",
    "plan_action",
    "plan_why",
    "reason",
    "fact_id",
    "fact_key",
    "outcome",
    "applying_from",
    "archived",
)
_SET = ", ".join(f"{c} = ?" for c in (*_DECIDED, "updated_at"))


def _claim(r: tuple[Any, ...]) -> Claim:
    return Claim(
        *r[:10],
        text=r[10],
        key=r[11],
        memory_type=r[12],
        subject=r[13],
        observed_at=utc(r[14]),
        relations=tuple(tuple(t) for t in json.loads(r[15])),
        whole=bool(r[16]),
        status=r[17],
        connections=connections_of(r[18]),
        plan=Plan.from_dict({**json.loads(r[19]), "action": r[20], "why": r[21]}) if r[19] else None,
        reason=r[22],
        fact_id=r[23],
        fact_key=r[24],
        outcome=r[25],
        applying_from=r[26],
        archived=bool(r[27]),
    )


def _decided(c: Claim) -> list[Any]:
    # The plan's action and why are the pipeline's vocabulary, not content: kept out of the text
    # column an erasure takes its needles from (``erasure_rules``).
    plan = c.plan.to_dict() if c.plan else None
    action, why = (plan.pop("action"), plan.pop("why")) if plan else (None, None)
    content = json.dumps(plan, sort_keys=True) if plan else None
    return [c.status, connections_json(c.connections), content, action, why, c.reason, c.fact_id, c.fact_key]


def staged_row(c: Claim, ns: Sequence[str], at: datetime) -> list[Any]:
    """A claim's row as staged in its source's namespace ``ns`` at ``at``, in ``_CLAIM`` order
    (then staged_at, updated_at)."""
    return (
        [c.claim_id, *ns, c.source_ref, c.source_kind, c.source_seq, c.source_fact, c.source_key]
        + [c.ordinal, c.text, c.key, c.memory_type, c.subject, c.observed_at]
        + [json.dumps([list(t) for t in c.relations]), c.whole, *_decided(c), c.outcome]
        + [c.applying_from, c.archived, at, at]
    )


class DuckDBReflect:
    # What PostgreSQL says its own way: a column is one of a list parameter; an event's evidence
    # holds a tag.
    _in = "list_contains(?, {})"
    _has_tag = "list_contains(json_extract_string(body, '$.evidence[*]'), ?)"

    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db

    def cursors(self, tenant: str) -> dict[str, int]:
        rows = self._db.rows("SELECT phase, position FROM reflect_cursors WHERE tenant = ?", [tenant])
        return {phase: int(position) for phase, position in rows}

    def advance(self, tenant: str, phase: str, position: int, at: datetime) -> None:
        with self._db.tx() as con:
            found = con.execute(
                "SELECT position FROM reflect_cursors WHERE tenant = ? AND phase = ?", [tenant, phase]
            ).fetchall()
            if not found:
                con.execute("INSERT INTO reflect_cursors VALUES (?, ?, ?, ?)", [tenant, phase, position, at])
            elif position > found[0][0]:
                con.execute(
                    "UPDATE reflect_cursors SET position = ?, updated_at = ? WHERE tenant = ? AND phase = ?",
                    [position, at, tenant, phase],
                )

    def events(self, tenant: str, since: int, upto: int, limit: int, types: Sequence[str]) -> list[StateChange]:
        rows = self._db.dicts(
            f"SELECT {', '.join(EVENT_COLUMNS)} FROM state_changes WHERE tenant = ? "
            f"AND {self._in.format('event_type')} AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
            [tenant, list(types), since, upto, limit],
        )
        return [event_of(r) for r in rows]

    def tagged(self, tenant: str, since: int, tag: str) -> list[StateChange]:
        rows = self._db.dicts(
            f"SELECT {', '.join(EVENT_COLUMNS)} FROM state_changes WHERE tenant = ? AND seq > ? "
            f"AND {self._has_tag} ORDER BY seq",
            [tenant, since or 0, tag],
        )
        return [event_of(r) for r in rows]

    def reduced(self, tenant: str, refs: Sequence[str]) -> set[str]:
        if not refs:
            return set()
        rows = self._db.rows(
            f"SELECT source_ref FROM reflect_inputs WHERE tenant = ? AND {self._in.format('source_ref')}",
            [tenant, list(refs)],
        )
        return {r[0] for r in rows}

    def stage(self, source: Source, claims: Sequence[Claim], at: datetime) -> None:
        ns = [source.tenant, source.scope, source.owner_id]
        with self._db.tx() as con:
            for c in claims:
                if con.execute("SELECT 1 FROM reflect_claims WHERE claim_id = ?", [c.claim_id]).fetchall():
                    continue
                con.execute(
                    f"INSERT INTO reflect_claims ({_CLAIM}, staged_at, updated_at) VALUES ({', '.join(['?'] * 30)})",
                    staged_row(c, ns, at),
                )
            con.execute(
                "INSERT INTO reflect_inputs VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'reduced', ?, NULL)",
                [*ns, source.ref, source.kind, source.key, source.seq, len(claims), at],
            )

    def claims(self, tenant: str, *, after: int = 0, upto: int | None = None) -> list[Claim]:
        rows = self._db.rows(
            f"SELECT {_CLAIM} FROM reflect_claims WHERE tenant = ? AND source_seq > ? AND source_seq <= ? "
            "ORDER BY source_seq, source_ref, ordinal",
            [tenant, after, upto if upto is not None else 2**62],
        )
        return [_claim(r) for r in rows]

    def save(self, claims: Sequence[Claim], at: datetime) -> None:
        with self._db.tx() as con:
            for c in claims:
                con.execute(
                    f"UPDATE reflect_claims SET {_SET} WHERE claim_id = ?",
                    [*_decided(c), c.outcome, c.applying_from, c.archived, at, c.claim_id],
                )
                if c.status == WRITTEN and c.fact_id and c.fact_id != c.source_fact:
                    self._lineage(con, c, at)

    @staticmethod
    def _lineage(con: Any, c: Claim, at: datetime) -> None:
        ns = [c.tenant, c.scope, c.owner_id]
        con.execute(
            "INSERT INTO belief_sources (tenant, scope, owner_id, fact_id, key, source_fact, source_key, "
            "support_type, run_id, recorded_at) SELECT ?, ?, ?, ?, ?, ?, ?, 'reflected_from', ?, ? "
            "WHERE NOT EXISTS (SELECT 1 FROM belief_sources WHERE run_id = ? AND fact_id = ? AND source_fact = ?)",
            [*ns, c.fact_id, c.fact_key, c.source_fact, c.source_key, c.claim_id, at]
            + [c.claim_id, c.fact_id, c.source_fact],
        )

    def inputs(self, tenant: str) -> list[dict[str, Any]]:
        return self._db.dicts(
            "SELECT scope, owner_id, source_ref, source_kind, source_key, source_seq, claims, status, reduced_at, "
            "archived_at FROM reflect_inputs WHERE tenant = ? ORDER BY source_seq, source_ref",
            [tenant],
        )

    def archive(self, tenant: str, refs: Sequence[str], at: datetime) -> int:
        with self._db.tx() as con:
            changed = con.execute(
                "SELECT count(*) FROM reflect_inputs WHERE tenant = ? AND list_contains(?, source_ref) "
                "AND status <> 'archived'",
                [tenant, list(refs)],
            ).fetchall()[0][0]
            con.execute(
                "UPDATE reflect_inputs SET status = 'archived', archived_at = ? WHERE tenant = ? "
                "AND list_contains(?, source_ref) AND status <> 'archived'",
                [at, tenant, list(refs)],
            )
            con.execute(
                "UPDATE reflect_claims SET archived = TRUE, updated_at = ? WHERE tenant = ? "
                "AND list_contains(?, source_ref) AND NOT archived",
                [at, tenant, list(refs)],
            )
        return int(changed)
