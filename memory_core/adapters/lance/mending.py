"""Checking the index against the store and mending it: ``consistency``, ``repair``, ``reindex``,
``optimize``, ``forget`` (a redaction) and ``status``, the maintenance half of ``IndexProjector``.
Each holds the store's lock throughout (no commit lands between its reads and its writes) and
writes what is queued first, as a search would."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from ...model import FactVersion
from ...ports import Clock, Embedder, IndexConsistency, ProjectionLedger, VersionLog
from .index import LanceIndex
from .rows import index_table, schema

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None]
# Failed embedder calls one ``fill`` makes at most: enough to single out a few refused values in a
# batch (about log2(batch) each), few enough that an embedder down costs a bounded wait.
FILL_FAILED_CALLS = 16
Indexable = Callable[[FactVersion], bool]


class IndexMending:
    """What ``IndexProjector`` does besides keeping the index in step (its base class)."""

    versions: VersionLog
    projections: ProjectionLedger
    index: LanceIndex
    embedder: Embedder
    clock: Clock
    indexable: Indexable
    _pending: dict[str, FactVersion]
    _vectors: list[Mapping[str, np.ndarray]]
    _caught_up: bool
    _written: int
    _stored: int
    flush: Callable[..., int]
    _embed_states: Callable[[Sequence[FactVersion]], np.ndarray]

    def repair(self) -> int:
        """Re-project every fact whose index write failed, and every fact ``consistency`` finds
        out of step: write the missing and stale, forget the extra, rewrite the duplicated.
        Returns how many facts were mended."""
        with self.versions.locked():
            self.flush()
            pending = self.projections.pending_projection_failures()
            report = self._consistency(pending)
            rewrite = sorted({*pending, *report.missing, *report.stale, *report.duplicated})
            states = self.versions.latest_states(rewrite)
            keep = [s for s in states if self.indexable(s)]
            # A fact held twice is dropped first: a merge into two target rows would keep both.
            gone = {*report.extra, *report.duplicated, *(s.fact_id for s in states if not self.indexable(s))}
            gone |= set(rewrite) - {s.fact_id for s in states}  # unknown to the log: nothing to serve
            self.index.delete_facts(sorted(gone))
            if keep:
                self.index.upsert(index_table(keep, self._embed_states(keep), self.index.dim))
            if pending:
                self.projections.resolve_projection_failures(pending, self.clock.now())
            mended = len({*rewrite, *report.extra})
        if mended:
            log.info("index repair mended %d facts (%d recorded failures)", mended, len(pending))
        return mended

    def fill(self, fact_ids: Sequence[str]) -> tuple[list[str], dict[str, str]]:
        """Re-project these facts alone (the embedding worker's bounded batch): each indexable one
        written anew with a fresh vector, the rest dropped. A fact whose vector cannot be made is
        recorded as a failed projection and the others are written all the same; the recorded
        failures of those written are resolved. Returns the facts written or dropped, and why each
        failed one failed (a fact in neither was not tried: the embedder failed too often)."""
        with self.versions.locked():
            self.flush()
            states = self.versions.latest_states(list(fact_ids))
            keep = [s for s in states if self.indexable(s)]
            gone = sorted(set(fact_ids) - {s.fact_id for s in keep})  # not served, or unknown to the log
            done, vectors, failed = self._embed_apart(keep, [FILL_FAILED_CALLS])
            try:
                # Their rows dropped first: a merge into a fact held twice would keep both rows.
                self.index.delete_facts(sorted({*gone, *(s.fact_id for s in done)}))
                if done:
                    self.index.upsert(index_table(done, vectors, self.index.dim))
            except Exception as exc:  # noqa: BLE001 - like any index write: recorded for repair
                failed.update((s.fact_id, _why(exc)) for s in done)
                done = []
            now = self.clock.now()
            by_error: dict[str, list[FactVersion]] = {}
            for state in keep:
                if state.fact_id in failed:
                    by_error.setdefault(failed[state.fact_id], []).append(state)
            for error, failing in by_error.items():
                self.projections.record_projection_failure(failing, error, now)
            written = sorted({*gone, *(s.fact_id for s in done)})
            settled = sorted(set(written) & set(self.projections.pending_projection_failures()))
            if settled:
                self.projections.resolve_projection_failures(settled, now)
        return written, failed

    def _embed_apart(
        self, states: Sequence[FactVersion], budget: list[int]
    ) -> tuple[list[FactVersion], np.ndarray, dict[str, str]]:
        """The states whose vectors were made, those vectors, and why each other one failed: a
        batch that fails is split in two until the failing facts stand alone, so one value the
        embedder refuses never holds back the rest (a few calls more per such value). ``budget``
        (failed calls left) bounds the cost of an embedder that fails every call (a server down):
        once spent, the states not tried yet are left out, neither written nor failed."""
        nothing = np.zeros((0, self.index.dim), dtype=np.float32)
        if not states or budget[0] <= 0:
            return [], nothing, {}
        try:
            return list(states), np.asarray(self._embed_states(states), dtype=np.float32), {}
        except Exception as exc:  # noqa: BLE001 - whatever the embedder raised, it is this batch's
            budget[0] -= 1
            if len(states) == 1:
                return [], nothing, {states[0].fact_id: _why(exc)}
        half = len(states) // 2
        left, right = self._embed_apart(states[:half], budget), self._embed_apart(states[half:], budget)
        return left[0] + right[0], np.concatenate([left[1], right[1]]), {**left[2], **right[2]}

    def reindex(self, *, batch: int = 4096, progress: Progress | None = None) -> int:
        """Rebuild the index from the store's latest fact states."""
        with self.versions.locked():  # a commit in between would be dropped or doubled
            self._pending, self._vectors, self._caught_up = {}, [], True
            watermark = self.versions.last_seq
            states = [s for s in self.versions.latest_states() if self.indexable(s)]
            tables = []
            for start in range(0, len(states), batch):
                chunk = states[start : start + batch]
                tables.append(index_table(chunk, self._embed_states(chunk), self.index.dim))
                if progress:
                    progress(min(start + batch, len(states)), len(states))
            data = pa.concat_tables(tables) if tables else schema(self.index.dim).empty_table()
            # The table may be dropped before it is written anew (to leave an old file format): until
            # that is done the watermark says nothing is indexed, so a run stopped in between is
            # caught up from the store at the next open.
            self.projections.set_index_watermark(0)
            self.index.replace_all(data)
            self.projections.set_index_watermark(watermark)
            self._written = self._stored = watermark
            pending = self.projections.pending_projection_failures()
            if pending:
                self.projections.resolve_projection_failures(pending, self.clock.now())
            return len(states)

    def forget(self, fact_ids: Sequence[str]) -> None:
        """A redaction: write the queue, drop the facts' rows, and fold the table so that no older
        version of its files (nor this process's memory) keeps what was redacted."""
        with self.versions.locked():
            self.flush()
            self.index.delete_facts(fact_ids)
            self.index.purge_history()

    def optimize(self, *, cleanup_older_than: timedelta | None = timedelta(days=1)) -> dict[str, Any]:
        with self.versions.locked():  # a compaction racing an index write fails one of them
            self.flush()  # one row per fact first
            return self.index.optimize(cleanup_older_than=cleanup_older_than)

    def prewarm(self, *, hit_columns: bool = True, vector_budget_bytes: int = 0) -> int:
        return self.index.prewarm(hit_columns=hit_columns, vector_budget_bytes=vector_budget_bytes)

    def status(self) -> dict[str, Any]:
        hidden, appends = self.index.unsettled
        return {
            "rows": self.index.count(),
            "unindexed_rows": self.index.unindexed_rows(),
            # Waiting for the index to settle: rows no longer served (at most), and appends.
            "unsettled_rows": hidden,
            "unsettled_appends": appends,
            "pending_repairs": len(self.projections.pending_projection_failures()),
            "embedder": self.embedder.name,
            "dim": self.embedder.dim,
        }

    def consistency(self) -> IndexConsistency:
        """Does the index agree with the store, fact id by fact id? Written what is queued first,
        as a search would, and read under the store's lock, so no write lands between the reads."""
        with self.versions.locked():
            self.flush()
            return self._consistency(self.projections.pending_projection_failures())

    def _consistency(self, pending: Sequence[str]) -> IndexConsistency:
        return compare(self.versions.latest_states(), self.index.heads(), self.indexable, pending)


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def compare(
    latest: Sequence[FactVersion],
    rows: Sequence[tuple[str, str, str]],
    indexable: Indexable,
    pending: Sequence[str] = (),
) -> IndexConsistency:
    """The index's rows (fact id, version id, value JSON) against the facts' latest states."""
    by_fact = {s.fact_id: s for s in latest}
    wanted = {f for f, s in by_fact.items() if indexable(s)}
    held: dict[str, list[tuple[str, str]]] = {}
    for fact_id, version_id, value_json in rows:
        held.setdefault(fact_id, []).append((version_id, value_json))
    stale = [
        f
        for f, found in held.items()
        if f in wanted and any(row != (by_fact[f].id, by_fact[f].value_json) for row in found)
    ]
    return IndexConsistency(
        facts=len(by_fact),
        indexable=len(wanted),
        index_rows=len(rows),
        missing=tuple(sorted(wanted - held.keys())),
        stale=tuple(sorted(stale)),
        extra=tuple(sorted(held.keys() - wanted)),
        duplicated=tuple(sorted(f for f, found in held.items() if f in wanted and len(found) > 1)),
        pending_repair=tuple(sorted(pending)),
    )
