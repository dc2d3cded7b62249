"""``LearningsStore`` over a PostgreSQL authority: the DuckDB adapter's statements (plain SQL),
but a candidate's version is unique (an index), so two replicas deciding one candidate from the
same read cannot both append its next version: the second is refused (``WrongState``)."""

from __future__ import annotations

from ...errors import WrongState
from ...extraction.learnings import Learning
from ..duckdb.learnings import _Q, DuckDBLearnings, learning_params
from .connection import PgConnection


class PgLearnings(DuckDBLearnings):
    """``LearningsStore`` over the authority's pool."""

    def __init__(self, db: PgConnection) -> None:
        super().__init__(db)  # type: ignore[arg-type]  # the same reads and transactions

    def record(self, learning: Learning) -> None:
        with self._db.tx() as tx:
            added = tx.execute(
                f"INSERT INTO learnings_queue ({_Q}) VALUES ({', '.join('?' * 12)}) "
                "ON CONFLICT (tenant, learning_id, version) DO NOTHING",
                learning_params(learning),
            ).rowcount
            if not added:
                raise WrongState(
                    f"learning {learning.learning_id} already has a version {learning.version}: decided meanwhile",
                    key=learning.learning_id,
                )
