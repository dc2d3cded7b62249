"""The retrieval index's rows: its schema, and fact states (or a batch's columns) as Arrow rows.

Times are int64 microseconds since the epoch (null: open-ended); ``live_span`` repeats the three
time columns a search leg checks as one fixed-size list (see ``read``).
"""

from __future__ import annotations

import json
from operator import attrgetter
from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa

from ...identity import Namespace
from ...model import FactVersion, Provenance
from ...texts import lexical_text
from .read import DERIVED_COLUMNS, live_spans


def namespace_key(tenant: str, scope: str, owner_id: str) -> str:
    """One column naming a row's namespace, so the prefilter every search needs is one lookup."""
    return json.dumps([tenant, scope, owner_id], ensure_ascii=False)


def schema(dim: int) -> pa.Schema:
    text = pa.string()
    return pa.schema(
        [
            ("fact_id", text),
            ("version_id", text),
            ("namespace", text),
            ("tenant", text),
            ("scope", text),
            ("owner_id", text),
            ("key", text),
            ("kind", text),
            ("memory_type", text),
            ("status", text),
            ("source_class", text),
            ("sensitivity", text),
            ("valid_at", pa.int64()),
            ("invalid_at", pa.int64()),
            ("observed_at", pa.int64()),
            ("expires_at", pa.int64()),
            ("created_at", pa.int64()),
            ("version", pa.int64()),
            ("reinforcement_count", pa.int64()),
            ("subject", text),
            ("session", text),  # the run session that wrote the row (its provenance's)
            ("confidence", pa.float64()),
            ("text", text),
            ("value_json", text),
            ("provenance_json", text),
            ("live_span", pa.list_(pa.int64(), 3)),
            ("vector", pa.list_(pa.float32(), dim)),
        ]
    )


class ProvenanceJson:
    """The provenance column of index rows: a batch shares one provenance, encoded once."""

    def __init__(self) -> None:
        self._seen: dict[tuple, str] = {}

    def __call__(self, provenance: Provenance, changed_by: str) -> str:
        known = (id(provenance), changed_by)
        if known not in self._seen:
            self._seen[known] = json.dumps({**provenance.to_dict(), "changed_by": changed_by})
        return self._seen[known]


def _timestamps(values: Sequence[Any]) -> pa.Array:
    """Aware datetimes (or None) as epoch microseconds, converted in Arrow rather than per value."""
    return pa.array(values, type=pa.timestamp("us", tz="UTC")).cast(pa.int64())


_TIMES = frozenset({"valid_at", "invalid_at", "observed_at", "expires_at", "created_at"})
# Index column -> the fact-version field it holds as it is.
_FROM_FIELD = {
    name: name
    for name in (
        "fact_id",
        "tenant",
        "scope",
        "owner_id",
        "key",
        "kind",
        "memory_type",
        "status",
        "source_class",
        "sensitivity",
        "version",
        "reinforcement_count",
        "subject",
        "confidence",
        "value_json",
        *_TIMES,
    )
} | {"version_id": "id"}


def index_table(states: Sequence[FactVersion], vectors: Sequence[np.ndarray] | np.ndarray, dim: int) -> pa.Table:
    """The index rows of ``states`` as one Arrow table, built column by column (a row of dicts
    per fact costs more than the index write itself at bulk sizes)."""

    def field(name: str) -> Sequence[Any]:  # str enums: Arrow reads a member as its value
        return list(map(attrgetter(name), states))

    return rows_of_fields(field, [lexical_text(s) for s in states], vectors, dim)


def rows_of_fields(
    field: Callable[[str], Sequence[Any]],
    texts: Sequence[str],
    vectors: Sequence[np.ndarray] | np.ndarray,
    dim: int,
    namespace: Namespace | None = None,
) -> pa.Table:
    """Index rows from one column per fact-version field (``field(name)``: id, fact_id, tenant,
    scope, owner_id, key, kind, memory_type, status, source_class, sensitivity, version,
    reinforcement_count, subject, confidence, value_json, the five times as aware datetimes or
    None, provenance and changed_by), the lexical ``texts`` and the vectors. ``namespace``: the one
    namespace every row is in, when the caller knows it (a batch), so it is named once."""
    n = len(texts)
    columns: dict[str, Sequence[Any]] = {name: field(source) for name, source in _FROM_FIELD.items()}
    if namespace is not None:
        columns["namespace"] = [namespace_key(namespace.tenant, namespace.scope.value, namespace.owner_id)] * n
    else:
        keys: dict[tuple, str] = {}
        columns["namespace"] = [
            keys.get(ns) or keys.setdefault(ns, namespace_key(*ns))
            for ns in zip(columns["tenant"], (getattr(s, "value", s) for s in columns["scope"]), columns["owner_id"])
        ]
    provenance_json = ProvenanceJson()
    provenances = field("provenance")
    columns["provenance_json"] = list(map(provenance_json, provenances, field("changed_by")))
    columns["session"] = [p.session for p in provenances]
    columns["text"] = texts
    return index_rows(columns, vectors, dim)


def index_rows(columns: dict[str, Sequence[Any]], vectors: Sequence[np.ndarray] | np.ndarray, dim: int) -> pa.Table:
    """Index rows from one list per stored column of the index schema (times as aware datetimes
    or None) and their vectors; the derived column (``live_span``) is made here."""
    target = schema(dim)
    n = len(columns["fact_id"])
    matrix = np.asarray(vectors, dtype=np.float32).reshape(n, dim)
    arrays = {
        f.name: _timestamps(columns[f.name]) if f.name in _TIMES else pa.array(columns[f.name], type=f.type)
        for f in target
        if f.name not in DERIVED_COLUMNS and f.name != "vector"
    }
    arrays["live_span"] = live_spans(arrays["valid_at"], arrays["invalid_at"], arrays["expires_at"])
    arrays["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel(), type=pa.float32()), dim)
    return pa.Table.from_arrays([arrays[f.name] for f in target], schema=target)
