"""bulk_set and import: the batch form of the point write, committed in one transaction.

One live-row lookup (the namespace cache), hash dedup, one embedding batch, the same peer
verdicts plus intra-batch pairs (``bulk_entries``), and one commit: every row lands or none
does. The first ``bulk_check_cap`` new facts are judged against peers (an import judges all of
them). Fresh entries nothing judges are carried as columns (``bulk_tail``), their vectors made
on a worker beside the reading and the insert (``bulk_vectors``).
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
from collections import Counter
from typing import TYPE_CHECKING, Any, Sequence

from ..audit import audit_entry
from ..errors import (
    Blacklisted,
    CharLimitExceeded,
    InvalidInput,
    KeyHoldsFact,
    Locked,
    PinnedConflict,
    PreconditionFailed,
)
from ..identity import Namespace
from ..model import FactVersion, Provenance
from ..ports import KeyChange, NewRows
from ..substrate.events import NO_CONTEXT, EventContext
from ..write import phases
from ..write.batch import BulkResult
from ..write.outcome import result_verdict
from ..write.request import SetRequest, SetState
from ..write.settle import entry_request, label_entry
from .bulk_entries import Fresh, Overlay, fresh_entry, fresh_parts, judge, renumber, through_phases
from .bulk_tail import Tail
from .bulk_vectors import BatchVectors, TailVectors, rows_of
from .core import Commit, key_changes

if TYPE_CHECKING:
    from .core import Session


def run_bulk(
    session: Session,
    requests: Sequence[SetRequest],
    *,
    check_cap: int | None = None,
    dry_run: bool = False,
    operation: str = "bulk_set",
    snapshot: tuple[str, int] | None = None,
    extra: Sequence[FactVersion] = (),
    context: EventContext = NO_CONTEXT,
) -> BulkResult:
    """``extra``: rows the caller decided on other keys (a document's stale chunks retired), written
    in the same transaction; ``context``: what the batch's event says beyond its rows."""
    if not requests:
        return BulkResult((), {}, dry_run=dry_run)
    namespace = requests[0].namespace
    config = session.write_config(namespace.tenant)
    cap = config.tenant.bulk_check_cap if check_cap is None else check_cap
    skipped: dict[str, list[str]] = {k: [] for k in ("unchanged", "pinned", "locked", "blacklisted", "rejected")}
    collecting = gc.isenabled()
    gc.disable()  # a batch allocates a few objects per entry and frees none: the cycle collector only slows it
    try:
        return _run_bulk(session, requests, config, cap, skipped, dry_run, operation, snapshot, extra, context)
    finally:
        if collecting:
            gc.enable()


def _run_bulk(
    session: Session,
    requests: Sequence[SetRequest],
    config,
    cap: int,
    skipped: dict[str, list[str]],
    dry_run: bool,
    operation: str,
    snapshot: tuple[str, int] | None,
    extra: Sequence[FactVersion],
    context: EventContext,
) -> BulkResult:
    namespace = requests[0].namespace
    named = Counter(r.key for r in requests)
    if cap and session.embedder is not None and session.peers is not None:
        session.peers.warm(namespace)  # a first load embeds outside the store's lock
    with session.locked():
        overlay = Overlay(session, namespace)
        windows: dict[tuple, tuple] = {}
        prepared: list[SetState | Fresh] = []
        tail = Tail(namespace)
        tail_vectors = TailVectors(session, len(requests), enabled=not dry_run)
        # How many more entries the peer check judges: an entry it would judge is never put in the tail.
        to_judge = cap if session.embedder is not None and session.peers is not None else 0
        for index, request in enumerate(requests):
            try:
                if (
                    request.if_match_sha256 is None
                    and request.key not in overlay.changed
                    and not session.versions.has_key(namespace, request.key)
                ):
                    parts = fresh_parts(config, request, windows)
                    if (
                        named[request.key] == 1
                        and not request.relations
                        and _to_tail(tail, tail_vectors, session, config, request, parts, to_judge)
                    ):
                        continue
                    entry: SetState | Fresh = fresh_entry(session, config, request, *parts)
                else:
                    entry = through_phases(session, config, request, overlay)
            except Locked:
                skipped["locked"].append(request.key)
                continue
            except PinnedConflict:
                skipped["pinned"].append(request.key)
                continue
            except Blacklisted:
                skipped["blacklisted"].append(request.key)
                continue
            except (CharLimitExceeded, KeyHoldsFact, PreconditionFailed, InvalidInput) as exc:
                label_entry(exc, index)
                raise
            if entry.rows == ():  # the stored (or earlier batch) bytes again, adding nothing
                skipped["unchanged"].append(request.key)
                continue
            overlay.record(entry.rows)
            prepared.append(entry)
            to_judge -= phases.needs_peer_check(entry)

        vectors = BatchVectors.plan(session, prepared, cap, tail, tail_vectors)
        judged = judge(session, prepared, vectors, overlay)
        verdicts: dict[str, str] = {}
        written: list[FactVersion] = []
        for state in judged:
            if state.verdict is not None and state.verdict.kind == "rejected":
                skipped["rejected"].append(state.request.key)
                continue
            written.extend(state.rows)
            written.extend(state.peer_rows)
            verdicts[state.request.key] = result_verdict(state)
        verdicts.update((r.key, "created") for r in tail.requests)
        checked, unchecked = len(vectors.judged), vectors.unjudged
        if dry_run:
            return _result((), verdicts, skipped, checked, unchecked, dry_run=True)
        written.extend(extra)
        tail_rows: list[FactVersion] = []
        if written or tail.count or snapshot is not None:
            written = renumber(session, namespace, written)
            ids = [r.id for r in written] + tail.ids
            digest = hashlib.sha256(",".join(ids).encode()).hexdigest()
            actor = requests[0].provenance.actor
            at = max([requests[0].now, *(r.created_at for r in written), *([tail.latest_now()] if tail.count else [])])
            audit = dataclasses.replace(
                audit_entry(namespace, "*", operation, (), None, actor, at),
                version_ids=f"{len(ids)} rows sha256:{digest}",
            )
            # The entries no peer check needed are embedded on a worker while the rows are
            # written; the transaction commits only once they are, so a failed call writes nothing.
            index = session.index
            index_tail = index is not None and bool(tail.embedded)
            if index_tail:
                vectors.embed_rest(
                    lambda texts, matrix: index.build_rows(
                        tail.embedded_column, tail.index_texts(texts), matrix, tail.namespace
                    )
                )
            else:
                vectors.embed_rest()
            changes = key_changes(namespace, written)
            # Still under the lock: no other write may miss the tail's keys in the cache.
            tail_rows = _commit(session, changes, audit, snapshot, judged, tail, vectors, index_tail, context)
    return _result((*written, *tail_rows), verdicts, skipped, checked, unchecked)


def _to_tail(
    tail: Tail, tail_vectors: TailVectors, session: Session, config, request: SetRequest, parts: tuple, to_judge: int
) -> bool:
    """Keep a fresh entry as columns unless the peer check would judge it."""
    memory_type, type_config, prepared, sha, on_expire = parts
    embedded = phases.is_embedded(type_config, prepared.sensitivity)
    judged_kind = embedded and phases.peer_checked_kind(request.kind, config.tenant)
    if judged_kind and to_judge > 0:
        return False
    tail.add(request, memory_type, sha, prepared, on_expire, embedded, session.new_id(), session.new_id())
    tail.needing_check += judged_kind
    if embedded:
        tail_vectors.add(request)
    return True


def _commit(
    session: Session,
    changes: tuple[KeyChange, ...],
    audit,
    snapshot: tuple[str, int] | None,
    judged: Sequence[SetState | Fresh],
    tail: Tail,
    vectors: BatchVectors,
    index_tail: bool,
    context: EventContext,
) -> list[FactVersion]:
    """The batch's one commit: its rows and the tail's staged columns in one transaction, then one
    index write for its new facts (the row states' and the tail's, whose index rows the worker
    built beside the insert), during which the tail's row objects are built and cached here; then
    the peer cache. Answers the tail's rows."""
    rows: list[FactVersion] = []

    def build_rows() -> None:
        rows.extend(tail.rows())
        session.versions.remember(rows)

    def tail_peers():
        _, _, value_vectors = vectors.of_tail
        facts = tail.facts()
        return (
            tail.namespace,
            [tail.ids[tail.embedded[n]] for n in facts],
            [tail.requests[tail.embedded[n]].key for n in facts],
            rows_of(value_vectors, facts),
        )

    if index_tail:
        new_rows = NewRows(
            len(tail.embedded), vectors.tail_rows, lambda: [rows[i] for i in tail.embedded], build_rows, tail_peers
        )
    else:
        new_rows = NewRows(0, lambda: None, lambda: [], build_rows)
    session.commit(
        Commit(
            changes,
            (audit,),
            landed=lambda: vectors.landed(judged),
            snapshot=snapshot,
            staged=tail if tail.count else None,
            before_commit=vectors.wait,
            new_rows=new_rows,
            context=context,
        )
    )
    return rows


def _result(
    written: tuple[FactVersion, ...],
    verdicts: dict[str, str],
    skipped: dict[str, list[str]],
    checked: int,
    unchecked: int,
    *,
    dry_run: bool = False,
) -> BulkResult:
    return BulkResult(
        written,
        verdicts,
        skipped_unchanged=tuple(skipped["unchanged"]),
        skipped_pinned=tuple(skipped["pinned"]),
        skipped_locked=tuple(skipped["locked"]),
        skipped_blacklisted=tuple(skipped["blacklisted"]),
        rejected=tuple(skipped["rejected"]),
        peer_checked=checked,
        peer_check_skipped=unchecked,
        dry_run=dry_run,
    )


def write_entries(
    session: Session, namespace: Namespace, entries: Sequence[Any], provenance: Provenance, *, dry_run: bool
) -> BulkResult:
    """``bulk_set``: entries ({"key", "value", and any set option}) written in one transaction."""
    if isinstance(entries, (str, bytes, dict)):
        raise InvalidInput("entries must be a list of objects", field="entries")
    now = session.clock.now()
    requests = [entry_request(namespace, i, e, provenance, now) for i, e in enumerate(entries)]
    return run_bulk(session, requests, dry_run=dry_run)
