"""bulk_set and import: the batch form of the point write, applied in one transaction.

One live-row lookup (the namespace cache), hash dedup, one embedding batch, the same peer
verdicts plus intra-batch pairs, and one transaction: every row lands or none does. The first
``bulk_check_cap`` new facts are judged against peers (an import judges all of them).
"""
from __future__ import annotations

import dataclasses
import gc
import hashlib
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..embed import VectorRows
from ..errors import (Blacklisted, CharLimitExceeded, InvalidInput, KeyHoldsFact, Locked, PinnedConflict,
                      PreconditionFailed)
from ..identity import Namespace
from ..model import FactVersion, Kind
from ..projection import value_text
from ..store.port import KeyChange, WriteBatch
from ..timeline import StatementPlan
from ..values import content_sha256
from . import phases
from .config import resolve_threshold
from .point import (WriteContext, after_write, audit_entry, embed_pairs, result_verdict, texts_to_embed,
                    verdict_rows)
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
    verdicts: dict[str, str]                     # key -> created | superseded | restated | merged | ...
    skipped_unchanged: tuple[str, ...] = ()
    skipped_pinned: tuple[str, ...] = ()
    skipped_locked: tuple[str, ...] = ()
    skipped_blacklisted: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()               # a pinned peer refused the entry
    left_as_is: tuple[str, ...] = ()             # import: the key's newest version is not live
    peer_checked: int = 0
    peer_check_skipped: int = 0
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for verdict in self.verdicts.values():
            counts[verdict] = counts.get(verdict, 0) + 1
        return {
            "rows_written": len(self.written), "verdicts": counts, "dry_run": self.dry_run,
            "skipped_unchanged": list(self.skipped_unchanged), "skipped_pinned": list(self.skipped_pinned),
            "skipped_locked": list(self.skipped_locked), "skipped_blacklisted": list(self.skipped_blacklisted),
            "rejected": list(self.rejected), "left_as_is": list(self.left_as_is),
            "peer_checked": self.peer_checked, "peer_check_skipped": self.peer_check_skipped,
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
    return ((r.sensitivity is None or r.sensitivity == prior.sensitivity) and (not r.pin or prior.pinned)
            and r.ttl_seconds is None and (not r.relations or r.relations == prior.relations))


def run_bulk(ctx: WriteContext, requests: Sequence[SetRequest], *, check_cap: int | None = None,
             dry_run: bool = False, operation: str = "bulk_set",
             snapshot: tuple[str, int] | None = None, extra: Sequence[FactVersion] = ()) -> BulkResult:
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


def _run_bulk(ctx: WriteContext, requests: Sequence[SetRequest], config, cap: int, skipped: dict[str, list[str]],
              dry_run: bool, operation: str, snapshot: tuple[str, int] | None,
              extra: Sequence[FactVersion]) -> BulkResult:
    namespace = requests[0].namespace
    with ctx.store.locked():
        overlay = _Overlay(ctx, namespace)
        windows: dict[tuple, tuple] = {}
        prepared: list[SetState | _Fresh] = []
        for index, request in enumerate(requests):
            try:
                if request.if_match_sha256 is None and request.key not in overlay.changed \
                        and not ctx.store.has_key(namespace, request.key):
                    entry: SetState | _Fresh = _fresh(ctx, config, request, windows)
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
                raise label_entry(exc, index)
            if entry.rows == ():  # the stored (or earlier batch) bytes again, adding nothing
                skipped["unchanged"].append(request.key)
                continue
            overlay.record(entry.rows)
            prepared.append(entry)

        vectors = _Vectors.plan(ctx, prepared, cap)
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
        checked, unchecked = len(vectors.judged), vectors.unjudged
        if dry_run:
            return _result((), verdicts, skipped, checked, unchecked, dry_run=True)
        written.extend(extra)
        if written or snapshot is not None:
            written = _renumber(ctx, namespace, written)
            by_key: dict[str, list[FactVersion]] = {}
            for row in written:
                by_key.setdefault(row.key, []).append(row)
            digest = hashlib.sha256(",".join(r.id for r in written).encode()).hexdigest()
            actor = requests[0].provenance.actor
            at = max([requests[0].now, *(r.created_at for r in written)])
            audit = dataclasses.replace(audit_entry(namespace, "*", operation, (), None, actor, at),
                                        version_ids=f"{len(written)} rows sha256:{digest}")
            # The entries no peer check needed are embedded on a worker while the rows are
            # written; the transaction commits only once they are, so a failed call writes nothing.
            vectors.embed_rest()
            ctx.store.apply(WriteBatch(tuple(KeyChange(namespace, k, tuple(v)) for k, v in by_key.items()),
                                       (audit,)), snapshot=snapshot, before_commit=vectors.wait)
    if written:
        index_rows, peer_rows = vectors.landed(judged)
        after_write(ctx, namespace, written, index_rows, peer_rows)
        if ctx.projector is not None:
            ctx.projector.flush()
    return _result(tuple(written), verdicts, skipped, checked, unchecked)


def _result(written: tuple[FactVersion, ...], verdicts: dict[str, str], skipped: dict[str, list[str]],
            checked: int, unchecked: int, *, dry_run: bool = False) -> BulkResult:
    return BulkResult(written, verdicts, skipped_unchanged=tuple(skipped["unchanged"]),
                      skipped_pinned=tuple(skipped["pinned"]), skipped_locked=tuple(skipped["locked"]),
                      skipped_blacklisted=tuple(skipped["blacklisted"]), rejected=tuple(skipped["rejected"]),
                      peer_checked=checked, peer_check_skipped=unchecked, dry_run=dry_run)


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
        return SetState(self.request, self.config, self.memory_type, None, self.type_config, (), 0, None, self.plan,
                        p.expires_at, self.on_expire, self.content_sha256, p.text, p.sensitivity, p.source_class,
                        self.request.now, self.rows)


def _fresh(ctx: WriteContext, config, request: SetRequest, windows: dict[tuple, tuple]) -> _Fresh:
    """``windows``: the type and expiry window a batch's entries share (one lookup per type)."""
    shared = (request.memory_type, request.on_expire, request.now) if request.ttl_seconds is None else None
    if shared is None or shared not in windows:
        memory_type = config.type(request.memory_type).retype_to or request.memory_type
        type_config = config.type(memory_type)
        window = (memory_type, type_config, *phases.expiry_window(request, type_config, config.tenant))
        if shared is None:
            return _fresh_row(ctx, config, request, *window)
        windows[shared] = window
    return _fresh_row(ctx, config, request, *windows[shared])


def _fresh_row(ctx: WriteContext, config, request: SetRequest, memory_type: str, type_config,
               expires_at, on_expire: str) -> _Fresh:
    prepared = phases.check_value(request, config.tenant, expires_at)
    sha = content_sha256(request.value_json)
    row = phases.new_fact_row(request, ctx.new_id(), memory_type, sha, 1, ctx.new_id(), request.now, on_expire,
                              prepared)
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


_REST_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memcore-bulk-embed")


class _Vectors:
    """A batch's vectors, made in two embedder calls: first for the entries the peer check judges
    (the first ``cap`` new facts), then for every other embedded entry (never a high value),
    which ``embed_rest`` starts on a worker thread and ``wait`` collects."""

    def __init__(self, ctx: WriteContext, prepared: Sequence[SetState | _Fresh], judged: list[int],
                 rest: list[int], unjudged: int) -> None:
        self.ctx, self.prepared = ctx, prepared
        self.judged, self.rest, self.unjudged = judged, rest, unjudged
        self.first = _embed(ctx, prepared, judged)
        self.second: tuple[np.ndarray, np.ndarray] | None = None
        self._future: Future | None = None

    @classmethod
    def plan(cls, ctx: WriteContext, prepared: Sequence[SetState | _Fresh], cap: int) -> "_Vectors":
        wanted = [i for i, s in enumerate(prepared) if phases.embedded(s)] if ctx.embedder is not None else []
        needing = [i for i, s in enumerate(prepared) if phases.needs_peer_check(s)]
        judged = [i for i in needing if phases.embedded(prepared[i])][:cap] if wanted and ctx.peers is not None else []
        taken = set(judged)
        return cls(ctx, prepared, judged, [i for i in wanted if i not in taken], len(needing) - len(judged))

    def embed_rest(self) -> None:
        if self.rest and self._future is None:
            self._future = _REST_POOL.submit(_embed, self.ctx, self.prepared, self.rest)

    def wait(self) -> None:
        if self.rest and self.second is None:
            self.embed_rest()
            self.second = self._future.result()

    def landed(self, judged: Sequence[SetState | _Fresh]) -> tuple[VectorRows | dict, VectorRows | dict]:
        """The index and peer vectors of the entries whose value landed, by the fact id it landed
        as: rows of the batch's matrices, taken in one copy each."""
        if self.ctx.embedder is None:
            return {}, {}
        self.wait()
        parts = [(self.judged, self.first)] + ([(self.rest, self.second)] if self.rest else [])
        ids: list[str] = []
        fact_ids: list[str] = []
        index_parts, value_parts = [], []
        for entries, (index, value) in parts:
            landed = [n for n, i in enumerate(entries) if judged[i].rows]
            facts = [n for n in landed if judged[entries[n]].rows[-1].kind is Kind.FACT]
            ids.extend(judged[entries[n]].rows[-1].fact_id for n in landed)
            fact_ids.extend(judged[entries[n]].rows[-1].fact_id for n in facts)
            index_parts.append(_rows_of(index, landed))
            value_parts.append(_rows_of(value, facts))
        return VectorRows(ids, _joined(index_parts)), VectorRows(fact_ids, _joined(value_parts))


# Each fresh copy of a batch's matrix (100k x 256 float32) costs up to a quarter of a second in
# page faults on this project's machine: rows are copied only when some are left out.
def _rows_of(matrix: np.ndarray, rows: list[int]) -> np.ndarray:
    return matrix if len(rows) == len(matrix) else matrix[rows]


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    kept = [p for p in parts if len(p)]
    return kept[0] if len(kept) == 1 else np.concatenate(parts)


def _embed(ctx: WriteContext, prepared: Sequence[SetState | _Fresh], entries: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(index vectors, value vectors) of these entries, in one embedder call."""
    if not entries:
        empty = np.zeros((0, ctx.embedder.dim if ctx.embedder is not None else 0), dtype=np.float32)
        return empty, empty
    return embed_pairs(ctx.embedder,
                       [texts_to_embed(prepared[i].request.key, prepared[i].request.value) for i in entries])


def _judge(ctx: WriteContext, prepared: list[SetState | _Fresh], vectors: _Vectors,
           overlay: _Overlay) -> list[SetState | _Fresh]:
    """Peer verdicts for the first ``cap`` new facts: stored peers and earlier entries of the batch."""
    checked = vectors.judged
    if not checked:
        return prepared
    namespace = prepared[0].request.namespace
    calibration = ctx.calibration()
    matrix = vectors.first[1]
    floors = [resolve_threshold(prepared[i].type_config, prepared[i].config.tenant, calibration).value
              for i in checked]
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
                peers.append(Peer(fact.fact_id, key, value_text(fact.value), cosine, fact.valid_at,
                                  fact.pinned, fact.locked))
        for m in np.nonzero(intra[n, :n] >= floors[n])[0]:  # earlier entries of the batch, as they stand now
            earlier = out[checked[m]]
            if not earlier.rows or earlier.request.key == r.key:
                continue
            fact = overlay.fact(earlier.request.key, earlier.rows[-1].fact_id)
            if fact is not None and phases.eligible_peer(fact, r.key, state.memory_type, r.now):
                peers.append(Peer(fact.fact_id, fact.key, value_text(fact.value), float(intra[n, m]),
                                  fact.valid_at, fact.pinned, fact.locked))
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
        out.append(row if row.version == next_version[row.key] else dataclasses.replace(row, version=next_version[row.key]))
        next_version[row.key] += 1
    return out


def import_requests(items: Sequence[Any], make_request: Callable[[int, Any], SetRequest]) -> list[SetRequest]:
    """Order import items oldest first: by valid_at (an undated item counts as now, which is what
    its request holds), then request order."""
    requests = [make_request(order, item) for order, item in enumerate(items)]
    return [r for _, r in sorted(enumerate(requests), key=lambda pair: (pair[1].valid_at, pair[0]))]
