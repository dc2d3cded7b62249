"""The retrieval index: the sink that keeps it a projection of the log, and the readers a search
reads one version of it through. SQL memory: one sandboxed database per scope."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np

from ..identity import Namespace
from ..model import FactVersion
from ..retrieval.filters import LegFilter


@dataclass
class NewRows:
    """Index rows a writer built for facts the index has never held (a batch's fresh entries):
    ``data`` answers them (it may wait for a worker), ``states`` names their facts (for a failure
    record), ``beside`` is the writer's work to run while they are written (exactly once, write or
    no write), and ``peers`` (namespace, fact ids, keys, value vectors) what the peer cache gains
    once they are."""

    count: int
    data: Callable[[], Any]
    states: Callable[[], Sequence[FactVersion]]
    beside: Callable[[], None]
    peers: Callable[[], tuple[Namespace, list[str], list[str], np.ndarray]] | None = None
    _ran: bool = field(default=False, init=False)
    _error: BaseException | None = field(default=None, init=False)

    def run_beside(self) -> None:
        """Run the writer's work once; what it raised is kept for ``done`` (not mistaken for an
        index failure)."""
        if not self._ran:
            self._ran = True
            try:
                self.beside()
            except BaseException as exc:  # noqa: BLE001 - handed back to the writer by done()
                self._error = exc

    def done(self) -> None:
        self.run_beside()
        if self._error is not None:
            raise self._error


@dataclass(frozen=True)
class IndexConsistency:
    """The index against the log, fact by fact: what an index check reports and ``repair`` mends.

    ``missing``: an indexable fact with no row. ``stale``: a row of another version, or other
    content, than the fact's latest state. ``extra``: a row of a fact the index must not serve
    (its latest state is not indexable, or the log has no such fact). ``duplicated``: an indexable
    fact with more than one row. ``pending_repair``: facts whose failed index write is recorded."""

    facts: int
    indexable: int
    index_rows: int
    missing: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    duplicated: tuple[str, ...] = ()
    pending_repair: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not (self.missing or self.stale or self.extra or self.duplicated)

    @property
    def unrecorded(self) -> tuple[str, ...]:
        """Facts out of step that no recorded failure explains (a lost write, a damaged table)."""
        pending = set(self.pending_repair)
        found = {*self.missing, *self.stale, *self.extra, *self.duplicated}
        return tuple(sorted(found - pending))

    def to_dict(self, *, examples: int | None = None) -> dict[str, Any]:
        """Counts, and the fact ids of each finding (the first ``examples`` of each, if given)."""
        out: dict[str, Any] = {"ok": self.ok, "facts": self.facts, "indexable": self.indexable}
        out["index_rows"] = self.index_rows
        for name in ("missing", "stale", "extra", "duplicated", "pending_repair", "unrecorded"):
            ids = getattr(self, name)
            out[name] = len(ids)
            out[f"{name}_ids"] = list(ids[:examples] if examples is not None else ids)
        return out


class IndexSink(Protocol):
    """Keeps the retrieval index a projection of the log: writes queue the states they changed
    and the queue is written in one index write when a read needs it."""

    def enqueue(
        self, states: Sequence[FactVersion], vectors: Mapping[str, np.ndarray] | None = None, *, hold: bool = False
    ) -> None: ...

    def flush(
        self,
        new_rows: NewRows | None = None,
        *,
        settle: bool = True,
        fold: bool = True,
        namespace: Namespace | None = None,
    ) -> int:
        """Write the queue. ``settle=False`` (a search's): rows that newer states replaced may stay
        in the index a while, never served; True leaves one row per fact. ``fold=False``: a
        settle leaves the appended fragments for ``tend`` to fold. ``namespace`` (a search's):
        write only if a state of that namespace is queued or being written, since the search
        reads no other."""
        ...

    def tend(self) -> bool:
        """Index upkeep between requests, off the search path (a thread of its own): write the
        queue, settle and fold what waits past its thresholds. True when it did something."""
        ...

    def queued(self) -> int:
        """How many facts wait in the queue for the next index write (the index's lag)."""
        ...

    def prewarm(self, *, hit_columns: bool = True, vector_budget_bytes: int = 0) -> int:
        """Load the index's search structures and the columns searches read (with
        ``hit_columns``, those a hit shows too; the stored vectors while they take at most
        ``vector_budget_bytes``) into this process's memory now, instead of as searches first
        need them; answers the bytes held."""
        ...

    def build_rows(
        self,
        field: Callable[[str], Sequence[Any]],
        texts: Sequence[str],
        vectors: np.ndarray,
        namespace: Namespace | None = None,
    ) -> Any:
        """Index rows from one column per fact-version field (see ``StagedRows``), their lexical
        texts and vectors: what ``NewRows.data`` answers."""
        ...

    def replay(self, fact_ids: Sequence[str]) -> None:
        """Queue the latest state of facts another process wrote to a shared authority; the
        index may hold an older state of them already, so theirs replaces it."""
        ...

    def forget(self, fact_ids: Sequence[str]) -> None:
        """Drop these facts' rows and every older version of the index's files (a redaction)."""
        ...

    def repair(self) -> int:
        """Re-project every fact a failed index write left behind and everything ``consistency``
        finds out of step (write the missing and stale, forget the extra). Returns how many facts
        it mended."""
        ...

    def fill(self, fact_ids: Sequence[str]) -> tuple[list[str], dict[str, str]]:
        """Re-project these facts alone, each with a fresh vector (the indexable ones; the rest are
        dropped); a fact whose vector or write fails is recorded for repair and does not hold back
        the others. Returns the facts written or dropped, and the failed ones with why (the
        embedding worker's batch; a fact in neither was not tried)."""
        ...

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int: ...

    def optimize(self, *, cleanup_older_than: timedelta | None = ...) -> dict[str, Any]:
        """Fold appended rows into the index's search structures (a maintenance step)."""
        ...

    def status(self) -> dict[str, Any]: ...

    def consistency(self) -> IndexConsistency:
        """Does the index agree with the log, fact id by fact id (after writing what is queued)?"""
        ...


class IndexReader(Protocol):
    """One version of the retrieval index, read by one search: both legs and the completion see
    the same rows. Rows are dicts of the columns asked for (``retrieval.rows``) plus ``_rowid``
    and the leg's own score (``_distance`` or ``_score``)."""

    def vector_leg(
        self, vector: np.ndarray, where: LegFilter, limit: int, columns: Sequence[str], *, full: bool
    ) -> list[dict[str, Any]]: ...

    def text_leg(
        self, text: str, where: LegFilter, limit: int, columns: Sequence[str], *, full: bool
    ) -> list[dict[str, Any]]: ...

    def facts_leg(self, fact_ids: Sequence[str], where: LegFilter, columns: Sequence[str]) -> list[dict[str, Any]]:
        """The served rows of these facts under the narrow filter (the key-match and graph legs:
        the store named the facts, by their key or by the triples they state)."""
        ...

    def complete(self, rows: Sequence[dict[str, Any]], columns: Sequence[str], *, latest: bool = False) -> None:
        """Complete leg rows in place with ``columns``; a row whose fact left the index since is
        marked ``_gone``. ``latest``: each row as the index serves its fact now, even when the
        table's version is still the one the legs read (a later page of a kept search)."""
        ...


class SearchIndex(Protocol):
    def reader(self) -> IndexReader | None:
        """The latest version of the index (None before anything was indexed)."""
        ...


# -- SQL memory --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SqlResult:
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool  # over max_rows or max_result_bytes: only the first rows that fit are here
    statement_type: str

    def to_dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row)) for row in self.rows]

    def to_polars(self) -> Any:
        import polars as pl

        return pl.DataFrame([list(r) for r in self.rows], schema=list(self.columns), orient="row")

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "rows": [list(r) for r in self.rows],
            "row_count": len(self.rows),
            "truncated": self.truncated,
            "statement_type": self.statement_type,
        }


SqlParams = Sequence[Any] | dict[str, Any] | None  # positional (?) or named ($name) parameters


class SqlDatabases(Protocol):
    """One sandboxed SQL database per scope."""

    def run(
        self,
        namespace: Namespace,
        statement: str,
        params: SqlParams,
        *,
        query_only: bool,
    ) -> SqlResult: ...

    def erase(self, tenant: str, pairs: Sequence[tuple[str, str]] | None) -> list[str]:
        """Delete the databases of a tenant (``pairs`` None) or of its (scope, owner) pairs."""
        ...

    def databases(self, tenant: str, pairs: Sequence[tuple[str, str]] | None) -> list[Path]: ...

    def note_owners(self, tenant: str, pairs: Sequence[tuple[str, str]]) -> int: ...

    def unattributed(self) -> list[Path]: ...

    def close(self) -> None: ...
