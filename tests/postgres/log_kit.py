"""What the version-log and audit tests of the PostgreSQL authority share: version rows, a log over
one connection (with stand-ins for the graph and the substrate, which these tests do not judge),
and batches."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Sequence

from memory_core.adapters.home_key import HomeKey
from memory_core.adapters.postgres.audit_chain import PgAuditChain
from memory_core.adapters.postgres.connection import PgConnection
from memory_core.adapters.postgres.versions import PgVersions
from memory_core.audit import audit_entry
from memory_core.graph.model import Relation
from memory_core.identity import Namespace, Scope
from memory_core.model import FactVersion, Kind, Op, Provenance, Status
from memory_core.ports import KeyChange, WriteBatch
from tests.conftest import T0

NS = Namespace("acme", Scope.USER, "ana")
PLAIN = Provenance(tenant="acme", actor="agent:a", origin="tool", session="s1")
QUOTED = Provenance(
    tenant="acme",
    actor="agent:b",
    origin="extraction",
    session="s1",
    source_quote="I moved to Lisbon",
    source_span=(4, 21),
    compaction_generation=2,
)


def version(
    row_id: str,
    *,
    key: str = "k",
    fact_id: str | None = None,
    v: int = 1,
    ns: Namespace = NS,
    i: int = 0,
    **changes: Any,
) -> FactVersion:
    """A version row; ``i`` varies the optional fields (so rows differ in every column kind)."""
    odd = i % 2 == 1
    fields: dict[str, Any] = dict(
        id=row_id,
        fact_id=fact_id or f"f-{row_id}",
        tenant=ns.tenant,
        scope=ns.scope,
        owner_id=ns.owner_id,
        key=key,
        value_json=f'"value {row_id} é"',
        content_sha256=f"{i:064x}",
        kind=Kind.NOTE if i % 3 == 0 else Kind.FACT,
        memory_type="general",
        status=Status.ACTIVE,
        op=Op.SET if v == 1 else Op.RESTATE,
        version=v,
        change_id=f"c-{row_id}",
        observed_at=None if i % 5 else T0,
        valid_at=T0 + timedelta(days=i, microseconds=i),
        invalid_at=None,
        created_at=T0 + timedelta(seconds=i, microseconds=7),
        superseded_by=None,
        reinforcement_count=i % 3,
        provenance=QUOTED if odd else PLAIN,
        changed_by="agent:a",
        subject="Ana" if odd else None,
        index_context="moving house" if i % 4 == 0 else None,
        expires_at=T0 + timedelta(days=90) if i % 8 == 0 else None,
        confidence=0.1 + (i % 7) / 3,
        conflict_with=("f-x", "f-y") if i % 6 == 1 else (),
        relations=(Relation("ana", "lives_in", "lisbon", valid_at=T0, subject_type="person"),) if i % 5 == 2 else (),
    )
    fields.update(changes)
    return FactVersion(**fields)


def batch(rows: Sequence[FactVersion], key: str = "k", ns: Namespace = NS) -> WriteBatch:
    entry = audit_entry(ns, key, "set", rows, None, "agent:a", T0)
    return WriteBatch(changes=(KeyChange(ns, key, tuple(rows)),), audits=(entry,))


@dataclass
class Graph:
    """The graph's side of a write, counted (the version log only calls these)."""

    writes: list[Any] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)

    def write(self, tx: Any, change: Any) -> None:
        self.writes.append(change)

    def forget(self, tx: Any, fact_ids: Sequence[str]) -> None:
        self.forgotten.extend(fact_ids)


@dataclass
class Substrate:
    """The substrate's side of a write, counted."""

    committed_events: int = 0

    def write(self, tx: Any, events: Sequence[Any], records: Sequence[Any]) -> int:
        return len(events)

    def committed(self, count: int) -> None:
        self.committed_events += count


class Staged:
    """``StagedRows`` over row objects: one column per ``FactVersion`` field."""

    def __init__(self, rows: Sequence[FactVersion]) -> None:
        self._rows = list(rows)
        self.count = len(self._rows)

    def column(self, name: str) -> list[Any]:
        return [getattr(r, name) for r in self._rows]


def log(db: PgConnection, key_dir: Path) -> PgVersions:
    """A version log over ``db`` (one "process"), signing with the key in ``key_dir``."""
    key = HomeKey.load(key_dir, private=True)
    audit = PgAuditChain(db, key, new_key_dir=key_dir)
    return PgVersions(db, audit, Graph(), Substrate())  # type: ignore[arg-type]
