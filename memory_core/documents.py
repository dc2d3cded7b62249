"""The Document plane: a Markdown body plus typed metadata, stored as chunks.

Chunks follow the Markdown's own structure (parsed with markdown-it): a heading starts a chunk,
consecutive blocks under one heading are packed up to ``MAX_CHUNK_CHARS``, and a block longer
than that is cut at line (then character) boundaries. Each chunk is an exact slice of the body,
so the chunks joined in order give the body back byte for byte. A chunk knows its heading path.

Storage: a document row ``doc:<key>`` (kind document, type ``document``: never embedded) holds
the title and metadata; chunk rows ``doc:<key>#0000``... (kind document, type
``document_chunk``) hold the text and are what search finds. Metadata naming a ``subject``, an
``entity_type`` and a ``fact_class`` marks the chunks as entity chunks (they will join the entity
graph); without it a chunk is prose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .errors import InvalidInput

MAX_CHUNK_CHARS = 1200
DOC_PREFIX = "doc:"
CHUNK_TYPE = "document_chunk"  # the memory type of a document's chunk rows
ENTITY_FIELDS = ("subject", "entity_type", "fact_class")
MAX_DOC_KEY = 200


@dataclass(frozen=True, slots=True)
class Chunk:
    index: int
    heading_path: tuple[str, ...]
    text: str

    @property
    def context(self) -> str | None:
        return " > ".join(self.heading_path) or None


def doc_row_key(doc_key: str) -> str:
    return f"{DOC_PREFIX}{doc_key}"


def chunk_key(doc_key: str, index: int) -> str:
    return f"{DOC_PREFIX}{doc_key}#{index:04d}"


def document_of(chunk: str) -> str | None:
    """The document key of a chunk key (``doc:runbook#0003`` -> ``runbook``); None for any other key."""
    if not chunk.startswith(DOC_PREFIX) or "#" not in chunk:
        return None
    return chunk[len(DOC_PREFIX) :].rpartition("#")[0] or None


def validate_doc_key(doc_key: Any) -> str:
    if not isinstance(doc_key, str) or not doc_key.strip():
        raise InvalidInput("a document key must be a non-empty string", field="doc_key")
    if "#" in doc_key or len(doc_key) > MAX_DOC_KEY or any(ord(c) < 32 for c in doc_key):
        raise InvalidInput(
            f"a document key has at most {MAX_DOC_KEY} characters, no '#' and no control characters", field="doc_key"
        )
    return doc_key


def validate_metadata(metadata: Any) -> dict[str, Any]:
    """Typed metadata: a flat object of strings, numbers and booleans."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInput("metadata must be an object", field="metadata")
    for name, value in metadata.items():
        if not isinstance(name, str) or not name:
            raise InvalidInput("metadata names must be non-empty strings", field="metadata")
        if isinstance(value, (dict, list)) or not isinstance(value, (str, int, float, bool)):
            raise InvalidInput(f"metadata {name!r} must be a string, a number or a boolean", field="metadata")
    given = [f for f in ENTITY_FIELDS if f in metadata]
    if given and len(given) != len(ENTITY_FIELDS):
        raise InvalidInput(
            f"entity metadata needs all of {', '.join(ENTITY_FIELDS)} (got {', '.join(given)})", field="metadata"
        )
    return dict(metadata)


def is_entity(metadata: Mapping[str, Any]) -> bool:
    return all(f in metadata for f in ENTITY_FIELDS)


def is_head(is_document: bool, value: Any) -> bool:
    """Is this row's value a document's head as ``doc_put`` writes it? A plain ``set`` under a
    ``doc:`` key (which nothing forbids) is not one, and reads skip it rather than fail on it."""
    return (
        is_document
        and isinstance(value, dict)
        and isinstance(value.get("title"), str)
        and isinstance(value.get("metadata"), dict)
        and isinstance(value.get("entity"), bool)
        and type(value.get("chunks")) is int
        and 0 <= value["chunks"] <= 1_000_000
    )


def _cut(text: str, limit: int) -> list[str]:
    """Cut one oversized block at line boundaries, and a line longer than the limit at characters."""
    pieces, current = [], ""
    for line in text.splitlines(keepends=True):
        while len(line) > limit:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(line[:limit])
            line = line[limit:]
        if len(current) + len(line) > limit and current:
            pieces.append(current)
            current = ""
        current += line
    if current:
        pieces.append(current)
    return pieces


def chunk_markdown(body: str, max_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    if not isinstance(body, str) or not body.strip():
        raise InvalidInput("a document body must be non-empty Markdown", field="body")
    from markdown_it import MarkdownIt

    lines = body.splitlines(keepends=True)
    tokens = MarkdownIt("commonmark").parse(body)
    # Top-level blocks: (start line, heading level or 0, heading text).
    starts: list[tuple[int, int, str]] = []
    depth = 0
    for i, token in enumerate(tokens):
        if depth == 0 and token.map is not None and token.nesting >= 0:
            level = int(token.tag[1]) if token.type == "heading_open" else 0
            title = tokens[i + 1].content.strip() if level else ""
            starts.append((token.map[0], level, title))
        depth += token.nesting
    if not starts or starts[0][0] != 0:
        starts.insert(0, (0, 0, ""))
    blocks = []
    path: list[tuple[int, str]] = []
    for n, (start, level, title) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        if level:
            path = [p for p in path if p[0] < level] + [(level, title)]
        blocks.append((bool(level), tuple(t for _, t in path), "".join(lines[start:end])))
    chunks: list[tuple[tuple[str, ...], str]] = []
    for heading, heading_path, text in blocks:
        if not text:
            continue
        fits = chunks and not heading and chunks[-1][0] == heading_path and len(chunks[-1][1]) + len(text) <= max_chars
        if fits:
            chunks[-1] = (heading_path, chunks[-1][1] + text)
        elif len(text) > max_chars:
            chunks.extend((heading_path, piece) for piece in _cut(text, max_chars))
        else:
            chunks.append((heading_path, text))
    return [Chunk(i, path_, text) for i, (path_, text) in enumerate(chunks)]


@dataclass(frozen=True, slots=True)
class StoredChunk:
    index: int
    key: str
    context: str | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "key": self.key, "context": self.context, "text": self.text}


@dataclass(frozen=True, slots=True)
class Document:
    """A document as it stood at an instant: its head row's title and metadata, and its chunks
    (their texts joined give the body, byte for byte)."""

    key: str
    title: str
    metadata: dict[str, Any]
    entity: bool
    chunks: tuple[StoredChunk, ...]
    version: int  # the head row's version

    @property
    def body(self) -> str:
        return "".join(c.text for c in self.chunks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "metadata": self.metadata,
            "entity": self.entity,
            "body": self.body,
            "chunks": [c.to_dict() for c in self.chunks],
            "version": self.version,
        }


@dataclass(frozen=True, slots=True)
class DocumentSummary:
    key: str
    title: str
    chunks: int
    metadata: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "title": self.title, "chunks": self.chunks, "metadata": self.metadata}
