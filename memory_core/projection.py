"""Projection of fact states into the retrieval index: the text a row is found by, and its row.

Pure: given fact versions and their vectors, build index rows. ``api`` applies them.
"""
from __future__ import annotations

import json
import re
from typing import Any, Sequence

import numpy as np

from .model import FactVersion
from .store.lance_index import micros, namespace_key

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
    if all(any(ch.isdigit() for ch in t) for t in tokens):
        return ""
    return " ".join(tokens)


def index_text(key: str, value: Any) -> str:
    """What the embedder sees: the key's words and the value's."""
    words = key_words(key)
    text = value_text(value)
    return f"{words}: {text}" if words else text


def lexical_text(state: FactVersion) -> str:
    """What BM25 sees: the embedder's text plus the subject and the row's context words."""
    parts = [f"{state.subject}:" if state.subject else "", state.index_context or "",
             index_text(state.key, state.value)]
    return " ".join(p for p in parts if p)


def index_rows(states: Sequence[FactVersion], vectors: np.ndarray) -> list[dict[str, Any]]:
    rows = []
    for state, vector in zip(states, vectors):
        value = state.value
        rows.append({
            "fact_id": state.fact_id, "version_id": state.id,
            "namespace": namespace_key(state.tenant, state.scope.value, state.owner_id), "tenant": state.tenant, "scope": state.scope.value,
            "owner_id": state.owner_id, "key": state.key, "kind": state.kind.value,
            "memory_type": state.memory_type, "status": state.status.value, "source_class": state.source_class,
            "sensitivity": state.sensitivity, "valid_at": micros(state.valid_at), "invalid_at": micros(state.invalid_at),
            "observed_at": micros(state.observed_at), "expires_at": micros(state.expires_at),
            "created_at": micros(state.created_at),
            "version": state.version, "reinforcement_count": state.reinforcement_count,
            "subject": state.subject, "text": lexical_text(state), "value_json": state.value_json,
            "provenance_json": json.dumps({**state.provenance.to_dict(), "changed_by": state.changed_by}),
            "vector": np.asarray(vector, dtype=np.float32),
        })
    return rows
