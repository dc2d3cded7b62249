"""Keeping the retrieval index in step with the authoritative store.

DuckDB is written first; the index second. A failed index write is recorded in
``projection_failures`` and repaired later: it never fails the primary write.
"""
from __future__ import annotations

import logging
from typing import Callable, Sequence

from .clock import Clock
from .embed import Embedder
from .model import FactVersion
from .projection import index_rows, index_text
from .store.duckdb_store import DuckDBStore
from .store.lance_index import LanceIndex

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None]


class IndexProjector:
    def __init__(self, store: DuckDBStore, index: LanceIndex, embedder: Embedder, clock: Clock) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.clock = clock

    def _rows(self, states: Sequence[FactVersion]) -> list[dict]:
        vectors = self.embedder.embed([index_text(s.key, s.value) for s in states])
        return index_rows(states, vectors)

    def project(self, states: Sequence[FactVersion]) -> bool:
        """Upsert the latest state of each fact; on failure record it and return False."""
        latest = {s.fact_id: s for s in sorted(states, key=lambda s: s.version)}
        try:
            self.index.upsert(self._rows(list(latest.values())))
            return True
        # The one deliberate catch-all of the core: whatever the index or the embedder raised,
        # the primary write has committed and must stand. The failure is recorded for repair.
        except Exception as exc:  # noqa: BLE001
            log.warning("index write failed for %d facts; recorded for repair: %s", len(latest), exc)
            self.store.record_projection_failure(list(latest.values()), f"{type(exc).__name__}: {exc}",
                                                 self.clock.now())
            return False

    def repair(self) -> int:
        """Re-project every fact whose index write failed. Returns how many were repaired."""
        pending = self.store.pending_projection_failures()
        if not pending:
            return 0
        states = self.store.latest_states(pending)
        self.index.upsert(self._rows(states))
        self.store.resolve_projection_failures(pending, self.clock.now())
        return len(pending)

    def reindex(self, *, batch: int = 4096, progress: Progress | None = None) -> int:
        """Rebuild the index from the store's latest fact states."""
        import pyarrow as pa

        from .store.lance_index import schema

        states = self.store.latest_states()
        tables = []
        for start in range(0, len(states), batch):
            chunk = states[start:start + batch]
            tables.append(pa.Table.from_pylist(self._rows(chunk), schema=schema(self.index.dim)))
            if progress:
                progress(min(start + batch, len(states)), len(states))
        data = pa.concat_tables(tables) if tables else schema(self.index.dim).empty_table()
        self.index.replace_all(data)
        pending = self.store.pending_projection_failures()
        if pending:
            self.store.resolve_projection_failures(pending, self.clock.now())
        return len(states)


def index_consistency(store: DuckDBStore, index: LanceIndex) -> dict[str, object]:
    """Does the index agree with the store? Missing: a visible fact with no row or an older row.
    Stale: a row served as visible whose fact the store has tombstoned (or never had)."""
    from .model import VISIBLE_STATUSES

    latest = {s.fact_id: s for s in store.latest_states()}
    rows = index.heads()
    visible = {f for f, s in latest.items() if s.status.value in VISIBLE_STATUSES}
    missing = sorted(f for f in visible if rows.get(f, ("", ""))[0] != latest[f].id)
    stale = sorted(f for f, (_, status) in rows.items()
                   if status in VISIBLE_STATUSES and (f not in latest or f not in visible))
    pending = set(store.pending_projection_failures())
    return {"facts": len(latest), "index_rows": len(rows), "missing": len(missing), "stale": len(stale),
            "missing_not_pending_repair": len([f for f in missing if f not in pending]),
            "examples": (missing + stale)[:5]}
