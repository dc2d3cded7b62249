"""The by-id ops of the Memory tool: ``get_by_id``, ``update`` / ``update_by_id`` and ``verify``.

Each reads under the session's lock, decides with ``lifecycle.byid`` and commits one version row
with one audit row. A revision's value passes the write path's checks (``write.phases``: the char
limit, the blacklist, the sensitivity tier) and its vectors are embedded as ``set`` embeds them;
its relations go to the graph through the commit's follow, as a ``set``'s do.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..audit import audit_entry
from ..errors import InvalidInput, NotFound
from ..identity import Namespace, Scope
from ..inputs import text
from ..lifecycle.byid import (
    Addressed,
    Revision,
    addressed,
    decide_update,
    decide_verify,
    live_fact,
    namespace_of,
    reaches,
    served_now,
    unknown_id,
)
from ..lifecycle.flags import Decision, KeyOp
from ..model import FactVersion, Kind, Provenance, WriteResult
from ..ports import KeyChange
from ..session import Commit, RunService
from ..session.keys import read_key
from ..session.point import embed_pairs
from ..session.reads import read_times
from ..temporal import Instant
from ..texts import texts_to_embed
from ..values import content_sha256
from ..write.options import SetOptions
from ..write.phases import check_value, is_embedded
from ..write.settle import request_of, validate_key

MAX_ID_CHARS = 200


class ByIdService(RunService):
    # -- reads ---------------------------------------------------------------------------------
    def get_by_id(self, row_id: str, *, as_of: Instant, known_at: Instant) -> FactVersion:
        row_id = _checked_id(row_id)
        session = self.session
        now = session.clock.now()
        when, known = read_times(now, as_of, known_at)
        found = self._resolve(row_id)
        if found.is_fact:
            row = found.row
            states = session.versions.fact_states(namespace_of(row), row.key, known)
            state = next((s for s in states if s.fact_id == row.fact_id), None)
            if state is None or not served_now(state, when, now):
                raise unknown_id(row_id)
            return state
        if known is not None and found.row.created_at > known:
            raise unknown_id(row_id)  # the store had not written that version yet
        return found.row

    def _resolve(self, row_id: str) -> Addressed:
        """The fact or version the id names, if this run reaches its namespace."""
        versions = self.session.versions
        fact = next(iter(versions.latest_states([row_id])), None)
        version = None if fact is not None else next(iter(versions.version_rows([row_id])), None)
        found = addressed(row_id, fact, version)
        if found is None or not reaches(self.identity, found.row):
            raise unknown_id(row_id)
        if namespace_of(found.row) in self.session.store.namespaces.deleted():
            raise unknown_id(row_id)  # a soft-deleted namespace reads as empty, by key or by id
        return found

    # -- writes --------------------------------------------------------------------------------
    def update(self, key: str, value: Any, *, scope: str | Scope, **options: Any) -> WriteResult:
        namespace = self.identity.namespace(scope)
        return self._revise(namespace, validate_key(key), None, value, options)

    def update_by_id(self, row_id: str, value: Any, **options: Any) -> WriteResult:
        row_id = _checked_id(row_id)
        chosen = _options(options)  # bad input is refused before the id is looked up
        with self.session.locked():
            found = self._resolve(row_id).row
            return self._revise(namespace_of(found), found.key, found.fact_id, value, options, chosen, row_id)

    def verify(self, key: str | None, row_id: str | None, *, scope: str | Scope) -> WriteResult:
        if (key is None) == (row_id is None):
            raise InvalidInput(
                "verify names one row: give a key or an id, exactly one of them", field="key" if key else "id"
            )
        judge = self.identity.actor
        with self.session.locked():
            if row_id is not None:
                found = self._resolve(_checked_id(row_id)).row
                op = self._read(namespace_of(found), found.key)
                fact = live_fact(op, found.fact_id)
                return self._commit(op, decide_verify(op, fact, judge), "verify")
            op = self._read(self.identity.namespace(scope), validate_key(key))
            return self._commit(op, decide_verify(op, live_fact(op, None), judge), "verify")

    def _revise(
        self,
        namespace: Namespace,
        key: str,
        fact_id: str | None,
        value: Any,
        options: dict[str, Any],
        chosen: SetOptions | None = None,
        row_id: str | None = None,
    ) -> WriteResult:
        session = self.session
        chosen = chosen or _options(options)
        provenance = Provenance.of(self.identity, self.origin)
        with session.locked():
            now = session.clock.now()
            request = request_of(namespace, key, value, provenance, now, chosen)  # the value's own checks
            op = self._read(namespace, key)
            try:
                fact = live_fact(op, fact_id, "; update never creates one (use set)")
            except NotFound:
                if row_id is not None:
                    raise unknown_id(row_id) from None
                raise
            config = session.write_config(namespace.tenant)
            prepared = check_value(request, config.tenant, fact.expires_at)  # char limit, blacklist, tier
            revision = Revision(
                value_json=request.value_json,
                content_sha256=content_sha256(request.value_json),
                sensitivity=prepared.sensitivity,
                provenance=provenance,
                relations=chosen.relations if options.get("relations") is not None else None,
                subject=chosen.subject,
                context=chosen.context,
                confidence=chosen.confidence,
                if_match_sha256=chosen.if_match_sha256,
            )
            decision = decide_update(op, fact, revision)
            vectors: dict[str, dict[str, Any]] = {"index": {}, "peer": {}}
            if decision.rows and decision.rows[0].content_sha256 != fact.content_sha256:
                vectors = self._vectors(decision.rows[0], config.type(fact.memory_type))
            return self._commit(op, decision, "update", vectors)

    def _vectors(self, row: FactVersion, type_config: Any) -> dict[str, dict[str, Any]]:
        """The revised value's index and peer vectors, as ``set`` embeds a new value (an embedder
        failure refuses the revision; nothing is written)."""
        embedder = self.session.embedder
        if embedder is None or not is_embedded(type_config, row.sensitivity):
            return {"index": {}, "peer": {}}
        index, peer = embed_pairs(embedder, [texts_to_embed(row.key, row.value)])
        return {"index": {row.fact_id: index[0]}, "peer": {row.fact_id: peer[0]} if row.kind is Kind.FACT else {}}

    def _read(self, namespace: Namespace, key: str) -> KeyOp:
        return read_key(self.session, namespace, key, self.identity.actor, self.session.clock.now())

    def _commit(
        self, op: KeyOp, decision: Decision, audit_op: str, vectors: dict[str, dict[str, Any]] | None = None
    ) -> WriteResult:
        rows: Sequence[FactVersion] = decision.rows
        if rows:
            self.session.refuse_read_only(audit_op)
            sha = rows[-1].content_sha256
            audit = audit_entry(op.namespace, op.key, audit_op, rows, sha, op.actor, op.created_at)
            vectors = vectors or {"index": {}, "peer": {}}
            self.session.commit(
                Commit(
                    (KeyChange(op.namespace, op.key, tuple(rows)),),
                    (audit,),
                    index_vectors=vectors["index"],
                    peer_vectors=vectors["peer"],
                )
            )
        return WriteResult(decision.verdict, op.key, tuple(rows), {"fact_id": rows[-1].fact_id} if rows else {})


def _checked_id(row_id: Any) -> str:
    return text(row_id, "id", max_chars=MAX_ID_CHARS)


# The set options a revision takes: what it states (relations, subject, context words), how sure
# (confidence), how sensitive (raise only) and the value it expects to replace.
UPDATE_OPTIONS = frozenset({"relations", "subject", "context", "confidence", "sensitivity", "if_match_sha256"})


def _options(options: dict[str, Any]) -> SetOptions:
    unknown = sorted(set(options) - UPDATE_OPTIONS)
    if unknown:
        raise InvalidInput(
            f"update takes none of {', '.join(unknown)}; its options are {', '.join(sorted(UPDATE_OPTIONS))}",
            field=unknown[0],
        )
    return SetOptions.parse({k: v for k, v in options.items() if v is not None}, "update")
