"""A batch's fresh tail, kept as columns instead of row objects.

Most entries of a large batch name a key the namespace has never held, once, and come after the
peer check's cap: nothing about them is judged, guarded or renumbered. They are validated by the
same phases as every entry (type, expiry, char limit, blacklist, sensitivity) and then kept as one
list per ``FactVersion`` field: the store inserts them from those lists (``StagedRows``), the
index builds its rows from the same lists, and the row objects the cache and the answer hold are
built while the index is written on another thread. At 100k entries the objects alone cost a
second of the batch's seven.
"""

from __future__ import annotations

import json
from operator import attrgetter
from typing import Any, Sequence

from ..identity import Namespace
from ..model import FactVersion, Kind, Op, Provenance, Status
from ..texts import index_text, lexical_words
from ..write import phases
from ..write.request import SetRequest

_ACTIVE, _PROPOSED = Status.ACTIVE, Status.PROPOSED


class Tail:
    """The fresh entries of one batch in one namespace, column by column (``StagedRows``)."""

    def __init__(self, namespace: Namespace) -> None:
        self.namespace = namespace
        self.requests: list[SetRequest] = []
        self.memory_types: list[str] = []
        self.shas: list[str] = []
        self.prepared: list[phases.Prepared] = []
        self.on_expire: list[str] = []
        self.ids: list[str] = []
        self.change_ids: list[str] = []
        self.embedded: list[int] = []  # positions of the entries that get a vector and an index row
        self.needing_check = 0  # entries a peer check would have judged below the cap
        self._provenance_memo: list[Provenance] | None = None

    @property
    def count(self) -> int:
        return len(self.requests)

    def add(
        self,
        request: SetRequest,
        memory_type: str,
        sha: str,
        prepared: phases.Prepared,
        on_expire: str,
        embedded: bool,
        row_id: str,
        change_id: str,
    ) -> None:
        if embedded:
            self.embedded.append(len(self.requests))
        self.requests.append(request)
        self.memory_types.append(memory_type)
        self.shas.append(sha)
        self.prepared.append(prepared)
        self.on_expire.append(on_expire)
        self.ids.append(row_id)
        self.change_ids.append(change_id)

    def rows(self) -> list[FactVersion]:
        """The entries as version rows: what ``column`` gave the store, as the point write builds them."""
        return [
            phases.new_fact_row(r, row_id, memory_type, sha, 1, change_id, r.now, on_expire, p)
            for r, row_id, memory_type, sha, change_id, on_expire, p in zip(
                self.requests, self.ids, self.memory_types, self.shas, self.change_ids, self.on_expire, self.prepared
            )
        ]

    def latest_now(self) -> Any:
        return max(r.now for r in self.requests)

    # -- the columns (``StagedRows``) ---------------------------------------------------------

    def column(self, name: str) -> Sequence[Any]:
        """One column of the entries' rows, field for field what ``phases.new_fact_row`` puts in a row."""
        requests = self.requests
        if name in _OWN:
            return getattr(self, _OWN[name])
        if name in _FROM_REQUEST:
            return list(map(attrgetter(_FROM_REQUEST[name]), requests))
        if name in _FROM_PREPARED:
            return list(map(attrgetter(name), self.prepared))
        if name == "status":
            return [_PROPOSED if r.proposed else _ACTIVE for r in requests]
        if name == "changed_by":
            return [r.provenance.actor for r in requests]
        if name == "confidence":
            return [1.0 if r.confidence is None else r.confidence for r in requests]
        if name == "provenance":
            return self._provenances()
        ns = self.namespace
        constants = {
            "tenant": ns.tenant,
            "scope": ns.scope,
            "owner_id": ns.owner_id,
            "op": Op.SET,
            "version": 1,
            "superseded_by": None,
            "reinforcement_count": 0,
            "locked": False,
            "conflict_with": (),
            "relations": (),
        }
        return [constants[name]] * self.count

    def _provenances(self) -> list[Provenance]:
        """Every entry's provenance (a batch usually shares one object: the store then writes its
        columns as constants)."""
        if self._provenance_memo is None or len(self._provenance_memo) != self.count:
            self._provenance_memo = [r.provenance for r in self.requests]
        return self._provenance_memo

    # -- the index ---------------------------------------------------------------------------

    def embedded_column(self, name: str) -> Sequence[Any]:
        """``column(name)`` of the embedded entries only (those that get an index row)."""
        column = self.column(name)
        return column if len(self.embedded) == self.count else [column[i] for i in self.embedded]

    def index_texts(self, index_texts: Sequence[str]) -> list[str]:
        """What BM25 sees of the embedded entries (``index_texts``: what the embedder saw, in
        their order), as the row-object path makes it from a stored row."""
        requests = [self.requests[i] for i in self.embedded] if len(self.embedded) != self.count else self.requests
        return [lexical_words(r.subject, r.context, _stored_text(r, t)) for r, t in zip(requests, index_texts)]

    def facts(self) -> list[int]:
        """Positions, within ``embedded``, of the entries that are facts (their value vectors are
        what later peer checks compare with)."""
        return [n for n, i in enumerate(self.embedded) if self.requests[i].kind is Kind.FACT]


def _stored_text(request: SetRequest, embedded_text: str) -> str:
    """The index text of the value as stored: a string as given (the text already embedded); a
    container as its canonical JSON reads back, keys sorted, as the row-object path sees it."""
    return embedded_text if isinstance(request.value, str) else index_text(request.key, json.loads(request.value_json))


_FROM_REQUEST = {
    "key": "key",
    "value_json": "value_json",
    "kind": "kind",
    "observed_at": "observed_at",
    "valid_at": "valid_at",
    "invalid_at": "invalid_at",
    "created_at": "now",
    "subject": "subject",
    "index_context": "context",
    "pinned": "pin",
}
_FROM_PREPARED = ("source_class", "sensitivity", "expires_at")
_OWN = {
    "id": "ids",
    "fact_id": "ids",
    "content_sha256": "shas",
    "memory_type": "memory_types",
    "change_id": "change_ids",
    "on_expire": "on_expire",
}
