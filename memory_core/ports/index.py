"""The retrieval index: the sink that keeps it a projection of the log, and the readers a search
reads one version of it through. SQL memory: one sandboxed database per scope."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
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


class IndexSink(Protocol):
    """Keeps the retrieval index a projection of the log: writes queue the states they changed
    and the queue is written in one index write when a read needs it."""

    def enqueue(
        self, states: Sequence[FactVersion], vectors: Mapping[str, np.ndarray] | None = None, *, hold: bool = False
    ) -> None: ...

    def flush(self, new_rows: NewRows | None = None) -> int: ...

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

    def forget(self, fact_ids: Sequence[str]) -> None:
        """Drop these facts' rows and every older version of the index's files (a redaction)."""
        ...

    def repair(self) -> int: ...

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int: ...

    def optimize(self, *, cleanup_older_than: timedelta | None = ...) -> dict[str, Any]:
        """Fold appended rows into the index's search structures (a maintenance step)."""
        ...

    def status(self) -> dict[str, Any]: ...

    def consistency(self) -> dict[str, object]:
        """Does the index agree with the log? Counts of missing and stale rows."""
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

    def complete(self, rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
        """Complete leg rows in place with ``columns``; a row whose fact left the index since is
        marked ``_gone``."""
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
    truncated: bool  # more rows than max_rows: only the first max_rows are here
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


class SqlDatabases(Protocol):
    """One sandboxed SQL database per scope."""

    def run(
        self,
        namespace: Namespace,
        statement: str,
        params: Sequence[Any] | dict[str, Any] | None,
        *,
        query_only: bool,
    ) -> SqlResult: ...

    def close(self) -> None: ...
