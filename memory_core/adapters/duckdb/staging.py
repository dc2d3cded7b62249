"""Many version rows as one staged Arrow table, inserted in one statement (``STAGED_INSERT``).

The staged layout is the table's columns but ``attrs``, then one column per ``ATTRS`` field:
DuckDB builds the attrs JSON from them in one vectorized pass, rather than ``json.dumps`` per
row. Rows come as row objects (``arrow_versions``) or as one column per ``FactVersion`` field
(``staged_columns``: a batch's fresh entries, never made into objects before the insert).
"""

from __future__ import annotations

import json
from datetime import timezone
from operator import attrgetter
from typing import Any, Callable, Sequence

import pyarrow as pa

from ...model import FactVersion, Provenance
from ...ports import StagedRows
from .schema import ATTRS, COLS, JSON_ATTRS, VERSION_COLUMNS

_ATTRS_OBJECT = (
    "json_object(" + ", ".join(f"'{a}', json({a})" if a in JSON_ATTRS else f"'{a}', {a}" for a in ATTRS) + ")"
)

# The attrs keys a row has only where it holds a value (``schema.attrs_json``): a capture's
# envelope and a reviewer's affirmation. Staged as columns only when a batch holds one; a merge
# patch drops each key whose column is null, so a row without one stores what a point write does.
OPTIONAL_ATTRS = (
    "prov_lens",
    "prov_frame",
    "prov_actor_chain",
    "prov_author",
    "prov_source",
    "prov_judged_by",
    "prov_judged_at",
)
_OPTIONAL_OBJECT = (
    "json_object("
    + ", ".join(f"'{a}', json({a})" if a == "prov_actor_chain" else f"'{a}', {a}" for a in OPTIONAL_ATTRS)
    + ")"
)
_SELECT = f"INSERT INTO memory_versions ({COLS}) SELECT " + ", ".join(c for c in VERSION_COLUMNS if c != "attrs")
STAGED_INSERT = _SELECT + f", {_ATTRS_OBJECT}::VARCHAR FROM {{source}}"
STAGED_INSERT_OPTIONAL = _SELECT + f", json_merge_patch({_ATTRS_OBJECT}, {_OPTIONAL_OBJECT})::VARCHAR FROM {{source}}"

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

    optional = optional_columns(provenances, shared)
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
    columns = {
        name: pa.array(given[name]() if name in given else values(name), type=types.get(name, pa.string()))
        for name in names
    }
    columns.update({name: pa.array(values, type=pa.string()) for name, values in optional.items()})
    return pa.table(columns)


def staged_insert(table: pa.Table) -> str:
    """The insert statement for a staged table: with the optional attrs where it stages them."""
    return STAGED_INSERT_OPTIONAL if OPTIONAL_ATTRS[0] in table.column_names else STAGED_INSERT


def _optional(p: Provenance) -> tuple[Any, ...]:
    judged_at = p.judged_at.astimezone(timezone.utc).isoformat() if p.judged_by and p.judged_at else None
    return (
        p.lens_id or None,
        p.frame_id or None,
        json.dumps(list(p.actor_chain), ensure_ascii=False) if p.actor_chain else None,
        p.author or None,
        p.source or None,
        p.judged_by or None,
        judged_at,
    )


def optional_columns(provenances: Sequence[Provenance], shared: Provenance | None) -> dict[str, list[Any]]:
    """The ``OPTIONAL_ATTRS`` columns of a batch, or none when no row holds any of them."""
    if shared is not None:
        one = _optional(shared)
        return {} if not any(one) else {name: [v] * len(provenances) for name, v in zip(OPTIONAL_ATTRS, one)}
    rows = [_optional(p) for p in provenances]
    if not any(any(r) for r in rows):
        return {}
    return {name: [r[i] for r in rows] for i, name in enumerate(OPTIONAL_ATTRS)}
