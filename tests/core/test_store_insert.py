"""The two ways the store appends version rows (one VALUES insert for a few rows, a staged Arrow
table for many) store exactly the same rows: every field reads back the same."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_core.adapters.duckdb import DuckDBHome
from memory_core.adapters.duckdb.versions import ARROW_INSERT_ABOVE
from memory_core.audit import AuditEntry
from memory_core.graph.model import Relation
from memory_core.identity import Namespace, Scope
from memory_core.model import FactVersion, Kind, Op, Provenance, Status
from memory_core.ports import KeyChange, WriteBatch
from tests.conftest import T0

NS = Namespace("acme", Scope.USER, "ana")
PLAIN = Provenance(tenant="acme", actor="agent:a", origin="tool")
QUOTED = Provenance(
    tenant="acme",
    actor="agent:b",
    origin="extraction",
    session="s1",
    run="r1",
    agent="x",
    model="m",
    source_quote="I moved to Lisbon",
    source_turn="D1:3",
    source_span=(4, 21),
    compaction_generation=2,
)


def rows(n: int, *, varied: bool) -> list[FactVersion]:
    out = []
    for i in range(n):
        odd = varied and i % 2 == 1
        out.append(
            FactVersion(
                id=f"v{i:03d}",
                fact_id=f"f{i:03d}",
                tenant=NS.tenant,
                scope=NS.scope,
                owner_id=NS.owner_id,
                key=f"k{i % 7}",
                value_json=f'"value {i} é"',
                content_sha256=f"{i:064x}",
                kind=Kind.FACT if i % 3 else Kind.NOTE,
                memory_type="general",
                status=Status.ACTIVE if i % 4 else Status.SUPERSEDED,
                op=Op.SET,
                version=i + 1,
                change_id=f"c{i}",
                observed_at=None if i % 5 else T0,
                valid_at=T0 + timedelta(days=i),
                invalid_at=T0 + timedelta(days=i + 1) if i % 4 == 0 else None,
                created_at=T0 + timedelta(seconds=i),
                superseded_by=f"v{i + 1:03d}" if i % 4 == 0 else None,
                reinforcement_count=i % 3,
                provenance=QUOTED if odd else PLAIN,
                changed_by="agent:c" if odd else "agent:a",
                subject="Ana" if odd else None,
                index_context="moving" if i % 6 == 0 else None,
                source_class="derived" if odd else "stated",
                sensitivity="low" if i % 9 == 0 else "normal",
                expires_at=T0 + timedelta(days=90) if i % 8 == 0 else None,
                on_expire="demote" if odd else "tombstone",
                locked=i % 10 == 0,
                pinned=i % 11 == 0,
                confidence=0.5 + (i % 5) / 10,
                conflict_with=(f"f{i + 1:03d}", f"f{i + 2:03d}") if i % 6 == 1 else (),
                relations=(Relation("ana", "lives_in", "lisbon", valid_at=T0, subject_type="person"),)
                if i % 5 == 2
                else (),
            )
        )
    return out


def stored(tmp_path, name: str, batches: list[list[FactVersion]]) -> dict[str, list[FactVersion]]:
    store = DuckDBHome.open(tmp_path / name)
    try:
        for batch in batches:
            audit = AuditEntry(
                at=T0,
                tenant=NS.tenant,
                scope=NS.scope.value,
                owner_id=NS.owner_id,
                key="*",
                op="bulk_set",
                version_ids=",".join(r.id for r in batch),
                content_sha256=None,
                actor="agent:a",
            )
            by_key: dict[str, list[FactVersion]] = {}
            for row in batch:
                by_key.setdefault(row.key, []).append(row)
            store.versions.apply(WriteBatch(tuple(KeyChange(NS, k, tuple(v)) for k, v in by_key.items()), (audit,)))
        return {f"k{k}": store.versions.history(NS, f"k{k}") for k in range(7)}
    finally:
        store.close()


@pytest.mark.parametrize("varied", [True, False], ids=["mixed-provenance", "one-provenance"])
def test_arrow_insert_stores_what_the_row_insert_stores(tmp_path, varied):
    written = rows(ARROW_INSERT_ABOVE + 9, varied=varied)
    staged = stored(tmp_path, "staged", [written])  # one batch: the Arrow path
    one_by_one = stored(tmp_path, "rows", [[r] for r in written])  # one row a batch: the VALUES path
    assert staged == one_by_one
    assert sum(len(v) for v in staged.values()) == len(written)
    by_id = {r.id: r for r in written}
    assert all(r == by_id[r.id] for history in staged.values() for r in history)
