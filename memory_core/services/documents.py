"""The Document ops of the Memory tool: doc_put, doc_get, doc_list, doc_delete.

A put writes the document row and its chunks in one transaction through the bulk path: an
unchanged chunk is a restatement that writes nothing, a changed one supersedes, and chunks a
shorter body no longer has are tombstoned in the same transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from ..audit import audit_entry
from ..documents import (
    CHUNK_TYPE,
    DOC_PREFIX,
    Document,
    DocumentSummary,
    StoredChunk,
    chunk_key,
    chunk_markdown,
    doc_row_key,
    is_entity,
    is_head,
    validate_doc_key,
    validate_metadata,
)
from ..errors import NotFound
from ..graph.model import DOCUMENTED_IN, Relation, entity_id
from ..identity import Namespace, Scope
from ..lifecycle.flags import decide_delete
from ..model import VISIBLE_STATUSES, FactVersion, Kind, Provenance, WriteResult
from ..ports import KeyChange
from ..session import Commit, RunService
from ..session.bulk import run_bulk
from ..session.holds import soft_deleted
from ..session.keys import read_key
from ..session.reads import fact_at_time, live_keys
from ..substrate.events import EventContext
from ..temporal import Instant
from ..write.settle import entry_request


def _entity_links(meta: dict[str, Any], key: str) -> tuple[Relation, ...] | None:
    """An entity chunk joins the graph: (subject, documented_in, the chunk's key), typed and classed."""
    if not is_entity(meta):
        return None
    return (
        Relation(
            entity_id(str(meta["subject"])),
            DOCUMENTED_IN,
            key,
            subject_type=str(meta["entity_type"]).strip().casefold(),
            fact_class=str(meta["fact_class"]),
        ),
    )


class DocumentsService(RunService):
    def _tombstones(self, namespace: Namespace, keys: Sequence[str], now: datetime) -> list[KeyChange]:
        """A tombstone for each of ``keys`` still visible (the caller holds the session's lock)."""
        changes = []
        for key in keys:
            op = read_key(self.session, namespace, key, self.identity.actor, now)
            if any(s.status.value in VISIBLE_STATUSES for s in op.states):
                changes.append(KeyChange(namespace, key, decide_delete(op).rows))
        return changes

    def _chunk_keys(self, namespace: Namespace, doc_key: str) -> list[str]:
        prefix = chunk_key(doc_key, 0)[:-4]
        return sorted(k for k in self.session.versions.keys(namespace) if k.startswith(prefix))

    def doc_put(
        self,
        doc_key: str,
        body: str,
        *,
        metadata: dict[str, Any] | None = None,
        title: str | None = None,
        scope: str | Scope,
        valid_at: Instant = None,
        observed_at: Instant = None,
    ) -> WriteResult:
        """Store a Markdown document as chunks (searchable as kind ``document``). Metadata with
        ``subject``, ``entity_type`` and ``fact_class`` makes its chunks entity chunks."""
        doc_key = validate_doc_key(doc_key)
        meta = validate_metadata(metadata)
        chunks = chunk_markdown(body)
        namespace = self.identity.namespace(scope)
        session = self.session
        now, provenance = session.clock.now(), Provenance.of(self.identity, self.origin)
        title = title or next((c.heading_path[0] for c in chunks if c.heading_path), doc_key)
        head = {"title": title, "metadata": meta, "chunks": len(chunks), "entity": is_entity(meta)}
        common = {"kind": Kind.DOCUMENT, "valid_at": valid_at, "observed_at": observed_at}
        entries = [{"key": doc_row_key(doc_key), "value": head, "memory_type": "document", **common}]
        entries += [
            {
                "key": chunk_key(doc_key, c.index),
                "value": c.text,
                "memory_type": CHUNK_TYPE,
                "subject": str(meta["subject"]) if is_entity(meta) else None,
                "relations": _entity_links(meta, chunk_key(doc_key, c.index)),
                "context": " > ".join([title, *c.heading_path]),
                **common,
            }
            for c in chunks
        ]
        requests = [entry_request(namespace, i, e, provenance, now) for i, e in enumerate(entries)]
        with session.locked():
            retired = self._tombstones(namespace, self._chunk_keys(namespace, doc_key)[len(chunks) :], now)
            stale = [r for c in retired for r in c.rows]
            result = run_bulk(
                session,
                requests,
                check_cap=0,
                operation="doc_put",
                extra=stale,
                context=EventContext(key=doc_row_key(doc_key)),
            )
        verdict = "unchanged" if not result.written else "written"
        return WriteResult(
            verdict,
            doc_row_key(doc_key),
            result.written,
            {
                "chunks": len(chunks),
                "chunks_unchanged": len(result.skipped_unchanged),
                "chunks_retired": len({r.key for r in stale}),
            },
        )

    def doc_get(
        self, doc_key: str, *, scope: str | Scope, as_of: Instant = None, known_at: Instant = None
    ) -> Document | None:
        """The document as it stood at ``as_of`` (as known at ``known_at``): title, metadata, body
        (its chunks joined, byte for byte) and chunks."""
        doc_key = validate_doc_key(doc_key)
        namespace = self.identity.namespace(scope)
        if soft_deleted(self.session.store, namespace):
            return None  # namespace_delete hid it, as get hides its facts
        head = fact_at_time(self.session, namespace, doc_row_key(doc_key), as_of, known_at)
        if head is None or not is_head(head.kind is Kind.DOCUMENT, head.value):
            return None
        chunks: list[FactVersion] = []
        for index in range(head.value["chunks"]):
            found = fact_at_time(self.session, namespace, chunk_key(doc_key, index), as_of, known_at)
            if found is None or found.kind is not Kind.DOCUMENT or not isinstance(found.value, str):
                raise NotFound(f"document {doc_key!r} is missing chunk {index} at that instant", doc_key=doc_key)
            chunks.append(found)
        return Document(
            doc_key,
            head.value["title"],
            head.value["metadata"],
            head.value["entity"],
            tuple(StoredChunk(i, c.key, c.index_context, c.value) for i, c in enumerate(chunks)),
            head.version,
        )

    def doc_list(self, *, scope: str | Scope, as_of: Instant = None) -> list[DocumentSummary]:
        """Every document of the scope live at ``as_of``."""
        namespace = self.identity.namespace(scope)
        if soft_deleted(self.session.store, namespace):
            return []
        return [
            DocumentSummary(f.key[len(DOC_PREFIX) :], f.value["title"], f.value["chunks"], f.value["metadata"])
            for f in live_keys(self.session, namespace, as_of, None)
            if f.memory_type == "document" and is_head(f.kind is Kind.DOCUMENT, f.value)
        ]

    def doc_delete(self, doc_key: str, *, scope: str | Scope) -> WriteResult:
        """Tombstone the document and all its chunks in one transaction (history keeps them)."""
        doc_key = validate_doc_key(doc_key)
        namespace = self.identity.namespace(scope)
        session = self.session
        now = session.clock.now()
        with session.locked():
            keys = [doc_row_key(doc_key), *self._chunk_keys(namespace, doc_key)]
            changes = self._tombstones(namespace, keys, now)
            if not changes:
                raise NotFound(f"no document {doc_key!r} in scope {namespace.scope.value}", doc_key=doc_key)
            rows = tuple(r for c in changes for r in c.rows)
            audit = audit_entry(
                namespace,
                doc_row_key(doc_key),
                "doc_delete",
                rows,
                None,
                self.identity.actor,
                max(r.created_at for r in rows),
            )
            session.commit(Commit(tuple(changes), (audit,)))
        return WriteResult("deleted", doc_row_key(doc_key), rows, {"chunks_deleted": len(changes) - 1})
