"""``ReflectStore`` over a PostgreSQL authority: ``reflect_cursors`` (one row per tenant and
phase), ``reflect_inputs`` (one row per input read), ``reflect_claims`` (one row per claim,
updated in place as the phases decide), and a written claim's lineage in ``belief_sources``
(``reflected_from``, the claim's id as its run).

A DuckDB home runs one pipeline at a time; here two replicas may run a tenant's phases at once,
so each write settles a race in the database rather than in the process:
- a cursor moves by one upsert that only ever raises it;
- an input and a claim are kept once (unique indexes): a second reduce of the same input adds
  nothing;
- ``save`` locks the claims' rows and never takes a claim back to an earlier status, nor replaces
  one already being applied or decided: a replica working from a stale read cannot undo (or
  apply again over) what another decided;
- ``archive`` answers the inputs it changed itself, so two archives never count one input twice.
"""

from __future__ import annotations

from datetime import datetime
from typing import Sequence

from ...reflect import Claim, Source
from ...reflect.model import APPLYING, CONNECTED, PLANNED, REJECTED, STAGED, WRITTEN
from ..duckdb.reflect import _CLAIM, _SET, DuckDBReflect, _decided, staged_row
from .connection import PgConnection

# How far a claim went; a save moves it forward only, and never re-takes one applying or decided.
_RANK = {STAGED: 0, CONNECTED: 1, PLANNED: 2, APPLYING: 3, WRITTEN: 4, REJECTED: 4}
_TAKEN = _RANK[APPLYING]


def _moves(stored: str, new: str) -> bool:
    before, after = _RANK.get(stored, 0), _RANK.get(new, 0)
    return after > before or (after == before and before < _TAKEN)


class PgReflect(DuckDBReflect):
    """``ReflectStore`` over the authority's pool."""

    _in = "{} = ANY(?)"
    _has_tag = "(body::jsonb -> 'evidence') @> jsonb_build_array(?::text)"  # no array: no tag

    def __init__(self, db: PgConnection) -> None:
        super().__init__(db)  # type: ignore[arg-type]  # the same reads

    def advance(self, tenant: str, phase: str, position: int, at: datetime) -> None:
        with self._db.tx() as tx:
            tx.execute(
                "INSERT INTO reflect_cursors (tenant, phase, position, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (tenant, phase) DO UPDATE SET position = excluded.position, "
                "updated_at = excluded.updated_at WHERE reflect_cursors.position < excluded.position",
                [tenant, phase, position, at],
            )

    def stage(self, source: Source, claims: Sequence[Claim], at: datetime) -> None:
        ns = [source.tenant, source.scope, source.owner_id]
        with self._db.tx() as tx:
            if claims:
                tx.executemany(
                    f"INSERT INTO reflect_claims ({_CLAIM}, staged_at, updated_at) VALUES ({', '.join(['?'] * 30)}) "
                    "ON CONFLICT (claim_id) DO NOTHING",
                    [staged_row(c, ns, at) for c in claims],
                )
            tx.execute(
                "INSERT INTO reflect_inputs VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'reduced', ?, NULL) "
                "ON CONFLICT (tenant, source_ref) DO NOTHING",
                [*ns, source.ref, source.kind, source.key, source.seq, len(claims), at],
            )

    def save(self, claims: Sequence[Claim], at: datetime) -> None:
        if not claims:
            return
        with self._db.tx() as tx:
            # Locked in one order (by id), so two saves of overlapping claims never deadlock.
            stored = dict(
                tx.execute(
                    "SELECT claim_id, status FROM reflect_claims WHERE claim_id = ANY(?) ORDER BY claim_id FOR UPDATE",
                    [sorted({c.claim_id for c in claims})],
                ).fetchall()
            )
            for c in claims:
                if c.claim_id in stored and not _moves(stored[c.claim_id], c.status):
                    continue  # another replica carried it further: its decision stands
                tx.execute(
                    f"UPDATE reflect_claims SET {_SET} WHERE claim_id = ?",
                    [*_decided(c), c.outcome, c.applying_from, c.archived, at, c.claim_id],
                )
                stored[c.claim_id] = c.status
                if c.status == WRITTEN and c.fact_id and c.fact_id != c.source_fact:
                    self._lineage(tx, c, at)

    def archive(self, tenant: str, refs: Sequence[str], at: datetime) -> int:
        with self._db.tx() as tx:
            # A concurrent archive waits on the rows, then finds them archived: each counted once.
            changed = tx.execute(
                "UPDATE reflect_inputs SET status = 'archived', archived_at = ? WHERE tenant = ? "
                "AND source_ref = ANY(?) AND status <> 'archived'",
                [at, tenant, list(refs)],
            ).rowcount
            tx.execute(
                "UPDATE reflect_claims SET archived = TRUE, updated_at = ? WHERE tenant = ? "
                "AND source_ref = ANY(?) AND NOT archived",
                [at, tenant, list(refs)],
            )
        return int(changed)
