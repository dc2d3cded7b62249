"""The Document ops of the Memory tool: doc_put, doc_get, doc_list, doc_delete.

A put writes the document row and its chunks in one transaction through the bulk path: an
unchanged chunk is a restatement that writes nothing, a changed one supersedes, and chunks a
shorter body no longer has are tombstoned in the same transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from .documents import (
    DOC_PREFIX,
    chunk_key,
    chunk_markdown,
    doc_row_key,
    is_entity,
    validate_doc_key,
    validate_metadata,
)
from .errors import NotFound
from .graph.model import DOCUMENTED_IN, Relation, entity_id
from .identity import Scope
from .lifecycle.flags import KeyOp, decide_delete
from .model import VISIBLE_STATUSES, FactVersion, Kind, WriteResult
from .store.port import KeyChange, WriteBatch
from .write.bulk import run_bulk
from .write.point import after_write, audit_entry
from .write.settle import entry_request

if TYPE_CHECKING:
    from .api import Memory

Instant = datetime | str | None


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


class DocumentOps:
    _memory: "Memory"

    def _chunk_keys(self, namespace, doc_key: str) -> list[str]:
        prefix = chunk_key(doc_key, 0)[:-4]
        return sorted(k for k in self._memory.store.keys(namespace) if k.startswith(prefix))

    def doc_put(
        self,
        doc_key: str,
        body: str,
        *,
        metadata: dict[str, Any] | None = None,
        title: str | None = None,
        scope: str | Scope = Scope.USER,
        valid_at: Instant = None,
        observed_at: Instant = None,
    ) -> WriteResult:
        """Store a Markdown document as chunks (searchable as kind ``document``). Metadata with
        ``subject``, ``entity_type`` and ``fact_class`` makes its chunks entity chunks."""
        doc_key = validate_doc_key(doc_key)
        meta = validate_metadata(metadata)
        chunks = chunk_markdown(body)
        namespace = self.identity.namespace(scope)  # type: ignore[attr-defined]
        memory = self._memory
        now, provenance = memory.clock.now(), self._provenance()  # type: ignore[attr-defined]
        title = title or next((c.heading_path[0] for c in chunks if c.heading_path), doc_key)
        head = {"title": title, "metadata": meta, "chunks": len(chunks), "entity": is_entity(meta)}
        common = {"kind": Kind.DOCUMENT, "valid_at": valid_at, "observed_at": observed_at}
        entries = [{"key": doc_row_key(doc_key), "value": head, "memory_type": "document", **common}]
        entries += [
            {
                "key": chunk_key(doc_key, c.index),
                "value": c.text,
                "memory_type": "document_chunk",
                "subject": str(meta["subject"]) if is_entity(meta) else None,
                "relations": _entity_links(meta, chunk_key(doc_key, c.index)),
                "context": " > ".join([title, *c.heading_path]),
                **common,
            }
            for c in chunks
        ]
        requests = [entry_request(namespace, i, e, provenance, now) for i, e in enumerate(entries)]
        with memory.store.locked():
            stale = []
            for key in self._chunk_keys(namespace, doc_key)[len(chunks) :]:
                states = tuple(memory.store.fact_states(namespace, key))
                if any(s.status.value in VISIBLE_STATUSES for s in states):
                    stale.extend(
                        decide_delete(
                            KeyOp(
                                namespace,
                                key,
                                states,
                                self.identity.actor,
                                now,  # type: ignore[attr-defined]
                                memory._new_id,
                            )
                        ).rows
                    )
            result = run_bulk(memory.write_context(), requests, check_cap=0, operation="doc_put", extra=stale)
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
        self, doc_key: str, *, scope: str | Scope = Scope.USER, as_of: Instant = None, known_at: Instant = None
    ) -> dict[str, Any] | None:
        """The document as it stood at ``as_of`` (as known at ``known_at``): title, metadata, body
        (its chunks joined, byte for byte) and chunks."""
        doc_key = validate_doc_key(doc_key)
        head = self.get(doc_row_key(doc_key), scope=scope, as_of=as_of, known_at=known_at)  # type: ignore[attr-defined]
        if head is None:
            return None
        chunks: list[FactVersion] = []
        for index in range(head.value["chunks"]):
            found = self.get(chunk_key(doc_key, index), scope=scope, as_of=as_of, known_at=known_at)  # type: ignore[attr-defined]
            if found is None:
                raise NotFound(f"document {doc_key!r} is missing chunk {index} at that instant", doc_key=doc_key)
            chunks.append(found)
        return {
            "key": doc_key,
            "title": head.value["title"],
            "metadata": head.value["metadata"],
            "entity": head.value["entity"],
            "body": "".join(c.value for c in chunks),
            "chunks": [
                {"index": i, "key": c.key, "context": c.index_context, "text": c.value} for i, c in enumerate(chunks)
            ],
            "version": head.version,
        }

    def doc_list(self, *, scope: str | Scope = Scope.USER, as_of: Instant = None) -> list[dict[str, Any]]:
        """Every document of the scope live at ``as_of``."""
        return [
            {
                "key": f.key[len(DOC_PREFIX) :],
                "title": f.value["title"],
                "chunks": f.value["chunks"],
                "metadata": f.value["metadata"],
            }
            for f in self.list(scope=scope, as_of=as_of)  # type: ignore[attr-defined]
            if f.kind is Kind.DOCUMENT and f.memory_type == "document"
        ]

    def doc_delete(self, doc_key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Tombstone the document and all its chunks in one transaction (history keeps them)."""
        doc_key = validate_doc_key(doc_key)
        namespace = self.identity.namespace(scope)  # type: ignore[attr-defined]
        memory = self._memory
        now = memory.clock.now()
        with memory.store.locked():
            keys = [doc_row_key(doc_key), *self._chunk_keys(namespace, doc_key)]
            changes = []
            for key in keys:
                states = tuple(memory.store.fact_states(namespace, key))
                if any(s.status.value in VISIBLE_STATUSES for s in states):
                    rows = decide_delete(KeyOp(namespace, key, states, self.identity.actor, now, memory._new_id)).rows  # type: ignore[attr-defined]
                    changes.append(KeyChange(namespace, key, rows))
            if not changes:
                raise NotFound(f"no document {doc_key!r} in scope {namespace.scope.value}", doc_key=doc_key)
            rows = tuple(r for c in changes for r in c.rows)
            audit = audit_entry(
                namespace,
                doc_row_key(doc_key),
                "doc_delete",
                rows,
                None,
                self.identity.actor,  # type: ignore[attr-defined]
                max(r.created_at for r in rows),
            )
            memory.store.apply(WriteBatch(tuple(changes), (audit,)))
        after_write(memory.write_context(), namespace, rows, {})
        return WriteResult("deleted", doc_row_key(doc_key), rows, {"chunks_deleted": len(changes) - 1})
