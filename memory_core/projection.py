"""Projection of fact states into the retrieval index: the text a row is found by, and its row.

Pure: given fact versions and their vectors, build index rows. ``api`` applies them.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

import numpy as np
import pyarrow as pa

from .model import FactVersion, Provenance
from .store.lance_index import namespace_key, schema
from .store.lance_read import DERIVED_COLUMNS, live_spans

_KEY_SEPARATORS = re.compile(r"[_\-./:#]+")


def value_text(value: Any) -> str:
    """A value as words: strings as they are, containers flattened to 'field: value' phrases."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "; ".join(f"{k}: {value_text(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(value_text(v) for v in value)
    return json.dumps(value, ensure_ascii=False)


def key_words(key: str) -> str:
    """A key's words. Import keys are digests and keys made only of ids ("D1:3") add none."""
    if key.startswith("import:"):
        return ""
    tokens = [t for t in _KEY_SEPARATORS.split(key) if t]
    if all(any(map(str.isdigit, t)) for t in tokens):
        return ""
    return " ".join(tokens)


def index_text(key: str, value: Any) -> str:
    """What the embedder sees: the key's words and the value's."""
    words = key_words(key)
    text = value_text(value)
    return f"{words}: {text}" if words else text


def lexical_text(state: FactVersion) -> str:
    """What BM25 sees: the embedder's text plus the subject and the row's context words."""
    return lexical_words(state.subject, state.index_context, index_text(state.key, state.value))


def lexical_words(subject: str | None, context: str | None, embedded_text: str) -> str:
    parts = [f"{subject}:" if subject else "", context or "", embedded_text]
    return " ".join(p for p in parts if p)


class ProvenanceJson:
    """The provenance column of index rows: a batch shares one provenance, encoded once."""

    def __init__(self) -> None:
        self._seen: dict[tuple, str] = {}

    def __call__(self, provenance: Provenance, changed_by: str) -> str:
        known = (id(provenance), changed_by)
        if known not in self._seen:
            self._seen[known] = json.dumps({**provenance.to_dict(), "changed_by": changed_by})
        return self._seen[known]


def _timestamps(values: list) -> pa.Array:
    """Aware datetimes (or None) as epoch microseconds, converted in Arrow rather than per value."""
    return pa.array(values, type=pa.timestamp("us", tz="UTC")).cast(pa.int64())


def index_table(states: Sequence[FactVersion], vectors: Sequence[np.ndarray] | np.ndarray, dim: int) -> pa.Table:
    """The index rows of ``states`` as one Arrow table, built column by column (a row of dicts
    per fact costs more than the index write itself at bulk sizes)."""
    namespaces: dict[tuple, str] = {}
    provenance_json = ProvenanceJson()
    ns_col, prov_col, text_col = [], [], []
    for s in states:
        ns = (s.tenant, s.scope.value, s.owner_id)
        if ns not in namespaces:
            namespaces[ns] = namespace_key(*ns)
        ns_col.append(namespaces[ns])
        prov_col.append(provenance_json(s.provenance, s.changed_by))
        text_col.append(lexical_text(s))
    columns: dict[str, Any] = {
        "fact_id": [s.fact_id for s in states],
        "version_id": [s.id for s in states],
        "namespace": ns_col,
        "tenant": [s.tenant for s in states],
        "scope": [s.scope for s in states],  # str enums: Arrow reads the value
        "owner_id": [s.owner_id for s in states],
        "key": [s.key for s in states],
        "kind": [s.kind for s in states],
        "memory_type": [s.memory_type for s in states],
        "status": [s.status for s in states],
        "source_class": [s.source_class for s in states],
        "sensitivity": [s.sensitivity for s in states],
        "version": [s.version for s in states],
        "reinforcement_count": [s.reinforcement_count for s in states],
        "subject": [s.subject for s in states],
        "text": text_col,
        "value_json": [s.value_json for s in states],
        "provenance_json": prov_col,
    }
    for name in ("valid_at", "invalid_at", "observed_at", "expires_at", "created_at"):
        columns[name] = [getattr(s, name) for s in states]
    return index_rows(columns, vectors, dim)


def index_rows(columns: Mapping[str, Sequence[Any]], vectors: Sequence[np.ndarray] | np.ndarray, dim: int) -> pa.Table:
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


_TIMES = frozenset({"valid_at", "invalid_at", "observed_at", "expires_at", "created_at"})
