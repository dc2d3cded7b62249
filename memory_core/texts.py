"""The words a fact is found by: what the embedder sees and what BM25 sees, from a key and a value.

Pure: the write path embeds these texts, the index stores them, and the peer check compares
values by them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .model import FactVersion

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


def texts_to_embed(key: str, value: Any) -> tuple[str, str]:
    """What the index embeds (the key's words and the value) and what a peer check compares (the
    value alone: peers live under other keys by definition, so key words only add noise)."""
    return index_text(key, value), value_text(value)
