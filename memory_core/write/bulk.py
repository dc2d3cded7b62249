"""bulk_set and import: the batch form of the point write, applied in one transaction.

One live-row lookup (the namespace cache), hash dedup, one embedding batch, the same peer
verdicts plus intra-batch pairs, and one transaction: every row lands or none does. The first
``bulk_check_cap`` new facts are judged against peers (an import judges all of them). Fresh
entries nothing judges are carried as columns (``bulk_tail``), their vectors made on a worker
beside the reading and the insert (``bulk_vectors``).
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

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
from ..indexing import NewRows
from ..model import FactVersion
from ..projection import value_text
from ..store.port import KeyChange, WriteBatch
from ..timeline import StatementPlan
from ..values import content_sha256
from . import phases
from .bulk_tail import Tail
from .bulk_vectors import BatchVectors, TailVectors
from .config import resolve_threshold
from .point import WriteContext, after_write, audit_entry, result_verdict, verdict_rows
from .request import SetRequest, SetState
from .settle import label_entry
from .verdicts import Peer, Verdict

IMPORT_PREFIX = "import:"


def import_key(text: str) -> str:
    """An imported item's key: a digest of its text, so a re-run lands on the same key."""
    return IMPORT_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class BulkResult:
    written: tuple[FactVersion, ...]
    verdicts: dict[str, str]  # key -> created | superseded | restated | merged | ...
    skipped_unchanged: tuple[str, ...] = ()
    skipped_pinned: tuple[str, ...] = ()
    skipped_locked: tuple[str, ...] = ()
    skipped_blacklisted: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()  # a pinned peer refused the entry
    left_as_is: tuple[str, ...] = ()  # import: the key's newest version is not live
    peer_checked: int = 0
    peer_check_skipped: int = 0
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for verdict in self.verdicts.values():
            counts[verdict] = counts.get(verdict, 0) + 1
        return {
            "rows_written": len(self.written),
            "verdicts": counts,
            "dry_run": self.dry_run,
            "skipped_unchanged": list(self.skipped_unchanged),
            "skipped_pinned": list(self.skipped_pinned),
            "skipped_locked": list(self.skipped_locked),
            "skipped_blacklisted": list(self.skipped_blacklisted),
            "rejected": list(self.rejected),
            "left_as_is": list(self.left_as_is),
            "peer_checked": self.peer_checked,
            "peer_check_skipped": self.peer_check_skipped,
        }


class _Overlay:
    """The namespace's key states as the batch has changed them so far (last writer wins)."""

    def __init__(self, ctx: WriteContext, namespace: Namespace) -> None:
        self.ctx, self.namespace = ctx, namespace
        self.changed: dict[str, dict[str, FactVersion]] = {}

    def states(self, key: str) -> list[FactVersion]:
        base = {s.fact_id: s for s in self.ctx.store.fact_states(self.namespace, key)}
        base.update(self.changed.get(key, {}))
        return sorted(base.values(), key=lambda s: s.version)

    def fact(self, key: str, fact_id: str) -> FactVersion | None:
        return self.changed.get(key, {}).get(fact_id) or self.ctx.store.fact_state(self.namespace, key, fact_id)

    def record(self, rows: Sequence[FactVersion]) -> None:
        for row in rows:
            self.changed.setdefault(row.key, {})[row.fact_id] = row


def _unchanged(state: SetState) -> bool:
    """A restatement that names no new sensitivity, adds no pin, sets no ttl and names no other
    graph facts writes nothing."""
    if not state.restatement:
        return False
    r = state.request
    prior = next(s for s in state.states if s.fact_id == state.plan.restates)
    return (
        (r.sensitivity is None or r.sensitivity == prior.sensitivity)
        and (not r.pin or prior.pinned)
        and r.ttl_seconds is None
        and (not r.relations or r.relations == prior.relations)
    )


def run_bulk(
    ctx: WriteContext,
    requests: Sequence[SetRequest],
    *,
    check_cap: int | None = None,
    dry_run: bool = False,
    operation: str = "bulk_set",
    snapshot: tuple[str, int] | None = None,
    extra: Sequence[FactVersion] = (),
) -> BulkResult:
    """``extra``: rows the caller decided on other keys (a document's stale chunks retired), written
    in the same transaction."""
    if not requests:
        return BulkResult((), {}, dry_run=dry_run)
    namespace = requests[0].namespace
    config = ctx.config(namespace.tenant)
    cap = config.tenant.bulk_check_cap if check_cap is None else check_cap
    skipped: dict[str, list[str]] = {k: [] for k in ("unchanged", "pinned", "locked", "blacklisted", "rejected")}
    collecting = gc.isenabled()
    gc.disable()  # a batch allocates a few objects per entry and frees none: the cycle collector only slows it
    try:
        return _run_bulk(ctx, requests, config, cap, skipped, dry_run, operation, snapshot, extra)
    finally:
        if collecting:
            gc.enable()


def _run_bulk(
    ctx: WriteContext,
    requests: Sequence[SetRequest],
    config,
    cap: int,
    skipped: dict[str, list[str]],
    dry_run: bool,
    operation: str,
    snapshot: tuple[str, int] | None,
    extra: Sequence[FactVersion],
) -> BulkResult:
    namespace = requests[0].namespace
    named = Counter(r.key for r in requests)
    with ctx.store.locked():
        overlay = _Overlay(ctx, namespace)
        windows: dict[tuple, tuple] = {}
        prepared: list[SetState | _Fresh] = []
        tail = Tail(namespace)
        tail_vectors = TailVectors(ctx, len(requests), enabled=not dry_run)
        # How many more entries the peer check judges: an entry it would judge is never put in the tail.
        to_judge = cap if ctx.embedder is not None and ctx.peers is not None else 0
        for index, request in enumerate(requests):
            try:
                if (
                    request.if_match_sha256 is None
                    and request.key not in overlay.changed
                    and not ctx.store.has_key(namespace, request.key)
                ):
                    parts = _fresh_parts(config, request, windows)
                    if (
                        named[request.key] == 1
                        and not request.relations
                        and _to_tail(tail, tail_vectors, ctx, config, request, parts, to_judge)
                    ):
                        continue
                    entry: SetState | _Fresh = _fresh_entry(ctx, config, request, *parts)
                else:
                    entry = _through_phases(ctx, config, request, overlay)
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

        vectors = BatchVectors.plan(ctx, prepared, cap, tail, tail_vectors)
        judged = _judge(ctx, prepared, vectors, overlay)
        verdicts: dict[str, str] = {}
        written: list[FactVersion] = []
        for state in judged:
            if state.verdict is not None and state.verdict.kind == "rejected":
                skipped["rejected"].append(state.request.key)
                continue
            written.extend(state.rows)
            written.extend(state.peer_rows)
            verdicts[state.request.key] = _verdict_name(state)
        verdicts.update((r.key, "created") for r in tail.requests)
        checked, unchecked = len(vectors.judged), vectors.unjudged
        if dry_run:
            return _result((), verdicts, skipped, checked, unchecked, dry_run=True)
        written.extend(extra)
        tail_rows: list[FactVersion] = []
        if written or tail.count or snapshot is not None:
            written = _renumber(ctx, namespace, written)
            by_key: dict[str, list[FactVersion]] = {}
            for row in written:
                by_key.setdefault(row.key, []).append(row)
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
            if ctx.projector is not None and tail.embedded:
                dim = ctx.projector.index.dim
                vectors.embed_rest(lambda texts, matrix: tail.index_table(texts, matrix, dim))
            else:
                vectors.embed_rest()
            ctx.store.apply(
                WriteBatch(tuple(KeyChange(namespace, k, tuple(v)) for k, v in by_key.items()), (audit,)),
                snapshot=snapshot,
                before_commit=vectors.wait,
                staged=tail if tail.count else None,
            )
            # Still under the lock: no other write may miss the tail's keys in the cache.
            tail_rows = _land(ctx, namespace, written, judged, tail, vectors)
    return _result((*written, *tail_rows), verdicts, skipped, checked, unchecked)


def _to_tail(
    tail: Tail, tail_vectors: TailVectors, ctx: WriteContext, config, request: SetRequest, parts: tuple, to_judge: int
) -> bool:
    """Keep a fresh entry as columns unless the peer check would judge it."""
    memory_type, type_config, prepared, sha, on_expire = parts
    embedded = phases.is_embedded(type_config, prepared.sensitivity)
    judged_kind = embedded and phases.peer_checked_kind(request.kind, config.tenant)
    if judged_kind and to_judge > 0:
        return False
    tail.add(request, memory_type, sha, prepared, on_expire, embedded, ctx.new_id(), ctx.new_id())
    tail.needing_check += judged_kind
    if embedded:
        tail_vectors.add(request)
    return True


def _land(
    ctx: WriteContext,
    namespace: Namespace,
    written: list[FactVersion],
    judged: Sequence[SetState | _Fresh],
    tail: Tail,
    vectors: BatchVectors,
) -> list[FactVersion]:
    """After the commit: one index write for the batch's new facts (the row states' and the
    tail's, whose rows the worker built beside the insert), during which the tail's row objects
    are built and cached here; then the peer cache. Answers the tail's rows."""
    rows: list[FactVersion] = []

    def build_rows() -> None:
        rows.extend(tail.rows())
        ctx.store.remember(rows)

    index_rows, peer_rows = vectors.landed(judged)
    after_write(ctx, namespace, written, index_rows, peer_rows, hold=True)
    if ctx.projector is None or not tail.embedded:
        build_rows()
        if ctx.projector is not None:
            ctx.projector.flush()
        return rows
    ctx.projector.flush(
        NewRows(len(tail.embedded), vectors.tail_rows, lambda: [rows[i] for i in tail.embedded], build_rows)
    )
    _, _, value_vectors = vectors.of_tail
    if ctx.peers is not None:
        facts = tail.facts()
        ctx.peers.put_rows(
            tail.namespace,
            [tail.ids[tail.embedded[n]] for n in facts],
            [tail.requests[tail.embedded[n]].key for n in facts],
            value_vectors if len(facts) == len(value_vectors) else value_vectors[facts],
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


@dataclass(slots=True)
class _Fresh:
    """An entry for a key the namespace has never held: no existing row to guard, restate or
    close, so it skips the request-state phases (the same checks run, on plain values)."""

    request: SetRequest
    config: Any
    memory_type: str
    type_config: Any
    content_sha256: str
    prepared: phases.Prepared
    on_expire: str
    rows: tuple[FactVersion, ...]
    verdict: Verdict | None = None
    peer_rows: tuple[FactVersion, ...] = ()
    plan: StatementPlan = StatementPlan(None, ())
    restatement: bool = False

    @property
    def sensitivity(self) -> str:
        return self.prepared.sensitivity

    @property
    def value_text(self) -> str:
        return self.prepared.text

    def as_state(self) -> SetState:
        p = self.prepared
        return SetState(
            self.request,
            self.config,
            self.memory_type,
            None,
            self.type_config,
            (),
            0,
            None,
            self.plan,
            p.expires_at,
            self.on_expire,
            self.content_sha256,
            p.text,
            p.sensitivity,
            p.source_class,
            self.request.now,
            self.rows,
        )


def _fresh_parts(config, request: SetRequest, windows: dict[tuple, tuple]) -> tuple:
    """An entry for a new key, checked: (memory type, type config, prepared value, sha, on_expire).
    ``windows``: the type and expiry window a batch's entries share (one lookup per type)."""
    shared = (request.memory_type, request.on_expire, request.now) if request.ttl_seconds is None else None
    window = windows.get(shared) if shared is not None else None
    if window is None:
        memory_type = config.type(request.memory_type).retype_to or request.memory_type
        type_config = config.type(memory_type)
        window = (memory_type, type_config, *phases.expiry_window(request, type_config, config.tenant))
        if shared is not None:
            windows[shared] = window
    memory_type, type_config, expires_at, on_expire = window
    prepared = phases.check_value(request, config.tenant, expires_at)
    return memory_type, type_config, prepared, content_sha256(request.value_json), on_expire


def _fresh_entry(
    ctx: WriteContext,
    config,
    request: SetRequest,
    memory_type: str,
    type_config,
    prepared: phases.Prepared,
    sha: str,
    on_expire: str,
) -> _Fresh:
    row = phases.new_fact_row(
        request, ctx.new_id(), memory_type, sha, 1, ctx.new_id(), request.now, on_expire, prepared
    )
    return _Fresh(request, config, memory_type, type_config, sha, prepared, on_expire, (row,))


def _through_phases(ctx: WriteContext, config, request: SetRequest, overlay: "_Overlay") -> SetState:
    state = phases.resolve_type(SetState(request, config))
    state = phases.fetch_live(state, overlay.states(request.key))
    state = phases.guard(state)
    state = phases.expiry(state)
    state = phases.prepare(state)
    state = phases.preconditions(state)
    if _unchanged(state):
        return dataclasses.replace(state, rows=())
    return phases.build_rows(state, ctx.new_id)


def _verdict_name(state: SetState) -> str:
    return result_verdict(state)


def _judge(
    ctx: WriteContext, prepared: list[SetState | _Fresh], vectors: BatchVectors, overlay: _Overlay
) -> list[SetState | _Fresh]:
    """Peer verdicts for the first ``cap`` new facts: stored peers and earlier entries of the batch."""
    checked = vectors.judged
    if not checked:
        return prepared
    namespace = prepared[0].request.namespace
    calibration = ctx.calibration()
    matrix = vectors.first[1]
    floors = [resolve_threshold(prepared[i].type_config, prepared[i].config.tenant, calibration).value for i in checked]
    stored = ctx.peers.nearest(namespace, matrix, min(floors), 16)
    intra = matrix @ matrix.T
    out = list(prepared)
    for n, i in enumerate(checked):
        state = out[i].as_state() if isinstance(out[i], _Fresh) else out[i]
        r = state.request
        peers = []
        for fact_id, key, cosine in stored[n]:
            fact = overlay.fact(key, fact_id)
            if fact is not None and phases.eligible_peer(fact, r.key, state.memory_type, r.now):
                peers.append(
                    Peer(fact.fact_id, key, value_text(fact.value), cosine, fact.valid_at, fact.pinned, fact.locked)
                )
        for m in np.nonzero(intra[n, :n] >= floors[n])[0]:  # earlier entries of the batch, as they stand now
            earlier = out[checked[m]]
            if not earlier.rows or earlier.request.key == r.key:
                continue
            fact = overlay.fact(earlier.request.key, earlier.rows[-1].fact_id)
            if fact is not None and phases.eligible_peer(fact, r.key, state.memory_type, r.now):
                peers.append(
                    Peer(
                        fact.fact_id,
                        fact.key,
                        value_text(fact.value),
                        float(intra[n, m]),
                        fact.valid_at,
                        fact.pinned,
                        fact.locked,
                    )
                )
        try:
            state = phases.peer_verdict(state, peers, calibration)
        except PinnedConflict:
            out[i] = dataclasses.replace(state, verdict=Verdict("rejected"), rows=())
            continue
        state = _bulk_verdict_rows(ctx, state, overlay)
        overlay.record((*state.rows, *state.peer_rows))
        out[i] = state
    return out


def _bulk_verdict_rows(ctx: WriteContext, state: SetState, overlay: _Overlay) -> SetState:
    """verdict_rows against the batch as it stands: a peer may be an earlier entry of this batch."""

    def head_version(key: str) -> int:
        return max((s.version for s in overlay.states(key)), default=0)

    return verdict_rows(state, overlay.fact, head_version, ctx.new_id)


def _renumber(ctx: WriteContext, namespace: Namespace, rows: list[FactVersion]) -> list[FactVersion]:
    """Give each key's rows consecutive versions above its stored head, in batch order."""
    out, next_version = [], {}
    for row in rows:
        if row.key not in next_version:
            head = ctx.store.head(namespace, row.key)
            next_version[row.key] = (head.version if head else 0) + 1
        out.append(
            row if row.version == next_version[row.key] else dataclasses.replace(row, version=next_version[row.key])
        )
        next_version[row.key] += 1
    return out


def import_requests(items: Sequence[Any], make_request: Callable[[int, Any], SetRequest]) -> list[SetRequest]:
    """Order import items oldest first: by valid_at (an undated item counts as now, which is what
    its request holds), then request order."""
    requests = [make_request(order, item) for order, item in enumerate(items)]
    return [r for _, r in sorted(enumerate(requests), key=lambda pair: (pair[1].valid_at, pair[0]))]
