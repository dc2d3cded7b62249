"""Many version rows as one staged Arrow table, inserted in one statement (``STAGED_INSERT``).

The staged layout is the table's columns but ``attrs``, then one column per ``ATTRS`` field:
DuckDB builds the attrs JSON from them in one vectorized pass, rather than ``json.dumps`` per
row. Rows come as row objects (``arrow_versions``) or as one column per ``FactVersion`` field
(``staged_columns``: a batch's fresh entries, never made into objects before the insert).
"""

from __future__ import annotations

import json
from operator import attrgetter
from typing import Any, Callable, Sequence

import pyarrow as pa

from ...model import FactVersion, Provenance
from ...ports import StagedRows
from .schema import ATTRS, COLS, JSON_ATTRS, VERSION_COLUMNS

STAGED_INSERT = (
    f"INSERT INTO memory_versions ({COLS}) SELECT "
    + ", ".join(c for c in VERSION_COLUMNS if c != "attrs")
    + ", json_object("
    + ", ".join(f"'{a}', json({a})" if a in JSON_ATTRS else f"'{a}', {a}" for a in ATTRS)
    + ")::VARCHAR FROM {source}"
)

_PROVENANCE_ATTRS = {
    "prov_tenant": "tenant",
    "prov_session": "session",
    "prov_run": "run",
    "prov_agent": "agent",
    "prov_model": "model",
    "prov_source_quote": "source_quote",
    "prov_origin": "origin",
    "prov_actor": "actor",
    "prov_source_turn": "source_turn",
    "prov_compaction_generation": "compaction_generation",
}


def arrow_versions(first_seq: int, rows: Sequence[FactVersion], audit_seq: int | None = None) -> pa.Table:
    """Row objects as one staged table, built column by column (a tuple per row, transposed, cost
    twice as much). The enums are str enums: Arrow reads a member as its value."""
    return staged_table(first_seq, audit_seq, len(rows), lambda name: list(map(attrgetter(name), rows)))


def staged_columns(first_seq: int, audit_seq: int | None, staged: StagedRows) -> pa.Table:
    """A batch's fresh entries (one column per field) as one staged table."""
    return staged_table(first_seq, audit_seq, staged.count, staged.column)


def provenance_column(name: str, provenances: Sequence[Provenance], shared: Provenance | None) -> list[Any]:
    """A ``prov_*`` staged column; ``shared``: the one provenance every row holds, if so."""
    if name == "prov_source_span":
        span = lambda p: json.dumps(list(p.source_span)) if p.source_span else "null"  # noqa: E731
        return [span(shared)] * len(provenances) if shared is not None else list(map(span, provenances))
    field = _PROVENANCE_ATTRS[name]
    if shared is not None:
        return [getattr(shared, field)] * len(provenances)
    return list(map(attrgetter(field), provenances))


def _relations_json(relations: Sequence[Any]) -> list[str]:
    return [json.dumps([x.to_json() for x in r], ensure_ascii=False) if r else "[]" for r in relations]


def staged_table(first_seq: int, audit_seq: int | None, n: int, field: Callable[[str], Sequence[Any]]) -> pa.Table:
    """The staged table of ``n`` version rows numbered from ``first_seq``, from one column per
    ``FactVersion`` field (``field(name)``). A batch mostly shares one provenance: its columns
    are then constants."""
    provenances = field("provenance")
    first = provenances[0] if n else None
    shared = first if n and all(p is first for p in provenances) else None

    def values(name: str) -> Sequence[Any]:
        if name == "relations":
            return _relations_json(field("relations"))
        if name in _PROVENANCE_ATTRS or name == "prov_source_span":
            return provenance_column(name, provenances, shared)
        return field(name)

    ts = pa.timestamp("us", tz="UTC")
    types = {
        "seq": pa.int64(),
        "version": pa.int64(),
        "observed_at": ts,
        "valid_at": ts,
        "invalid_at": ts,
        "created_at": ts,
        "expires_at": ts,
        "audit_seq": pa.int64(),
        "reinforcement_count": pa.int64(),
        "locked": pa.bool_(),
        "pinned": pa.bool_(),
        "confidence": pa.float64(),
        "conflict_with": pa.list_(pa.string()),
        "prov_compaction_generation": pa.int64(),
    }
    given = {"seq": lambda: range(first_seq, first_seq + n), "audit_seq": lambda: [audit_seq] * n}
    names = [c for c in VERSION_COLUMNS if c != "attrs"] + list(ATTRS)
    return pa.table(
        {
            name: pa.array(given[name]() if name in given else values(name), type=types.get(name, pa.string()))
            for name in names
        }
    )
