"""A batch's fresh tail, kept as columns instead of row objects.

Most entries of a large batch name a key the namespace has never held, once, and come after the
peer check's cap: nothing about them is judged, guarded or renumbered. They are validated by the
same phases as every entry (type, expiry, char limit, blacklist, sensitivity) and then kept as one
list per column: the store inserts them from an Arrow table, the index gets its rows from the same
lists, and the row objects the cache and the answer hold are built while the index is written on
another thread. At 100k entries the objects alone cost a second of the batch's seven.
"""

from __future__ import annotations

import json
from operator import attrgetter
from typing import Any, Sequence

import numpy as np
import pyarrow as pa

from ..identity import Namespace
from ..model import FactVersion, Kind, Op, Provenance, Status
from ..projection import ProvenanceJson, index_rows, index_text, lexical_words
from ..store.lance_index import namespace_key
from ..store.schema import provenance_column, staged_table
from . import phases
from .request import SetRequest

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
        self._provenance_memo: tuple[list[Provenance], Provenance | None] | None = None

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
        """The entries as version rows: what ``table`` stored, as the point write builds them."""
        return [
            phases.new_fact_row(r, row_id, memory_type, sha, 1, change_id, r.now, on_expire, p)
            for r, row_id, memory_type, sha, change_id, on_expire, p in zip(
                self.requests, self.ids, self.memory_types, self.shas, self.change_ids, self.on_expire, self.prepared
            )
        ]

    def latest_now(self) -> Any:
        return max(r.now for r in self.requests)

    # -- the store's staged insert -----------------------------------------------------------

    def table(self, first_seq: int, audit_seq: int | None) -> pa.Table:
        return staged_table(first_seq, audit_seq, self.count, self._column)

    def _column(self, name: str) -> Sequence[Any]:
        """One staged column, field for field what ``phases.new_fact_row`` puts in a row."""
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
        if name.startswith("prov_"):
            return provenance_column(name, *self._provenances())
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
            "conflict_with": [],
            "relations": "[]",
        }
        return [constants[name]] * self.count

    def _provenances(self) -> tuple[list[Provenance], Provenance | None]:
        """Every entry's provenance, and the one they all share if they do (a batch usually does)."""
        if self._provenance_memo is None or len(self._provenance_memo[0]) != self.count:
            provenances = [r.provenance for r in self.requests]
            first = provenances[0] if provenances else None
            self._provenance_memo = (provenances, first if all(p is first for p in provenances) else None)
        return self._provenance_memo

    # -- the index ---------------------------------------------------------------------------

    def index_table(self, index_texts: Sequence[str], vectors: np.ndarray, dim: int) -> pa.Table:
        """The index rows of the embedded entries (``index_texts`` and ``vectors`` in their order),
        column for column what ``projection.index_table`` makes of the rows: the columns a row
        shares with its stored version come from the same ``_column``."""
        at = self.embedded
        every = len(at) == self.count

        def pick(column: Sequence[Any]) -> Sequence[Any]:
            return column if every else [column[i] for i in at]

        requests = pick(self.requests)
        ns = self.namespace
        provenance_json = ProvenanceJson()
        columns: dict[str, Sequence[Any]] = {
            name: pick(self._column(stored)) for name, stored in _INDEX_FROM_STORED.items()
        }
        columns["namespace"] = [namespace_key(ns.tenant, ns.scope.value, ns.owner_id)] * len(at)
        columns["text"] = [
            lexical_words(r.subject, r.context, _stored_text(r, t)) for r, t in zip(requests, index_texts)
        ]
        columns["provenance_json"] = [provenance_json(r.provenance, r.provenance.actor) for r in requests]
        return index_rows(columns, vectors, dim)

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
# Index column -> the stored (staged) column it repeats.
_INDEX_FROM_STORED = {
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
        "value_json",
        "valid_at",
        "invalid_at",
        "observed_at",
        "expires_at",
        "created_at",
    )
} | {"version_id": "id"}
_OWN = {
    "id": "ids",
    "fact_id": "ids",
    "content_sha256": "shas",
    "memory_type": "memory_types",
    "change_id": "change_ids",
    "on_expire": "on_expire",
}
