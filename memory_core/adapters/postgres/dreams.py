"""``DreamsStore`` over a PostgreSQL authority: ``dream_proposals`` (one row per version of a
proposal), and the window reads of a pass over ``state_changes`` and ``interactions``.

The DuckDB adapter's statements, but for each proposal's newest version (``DISTINCT ON`` where
DuckDB says ``QUALIFY``), an event's instant read from its JSON body, and the queue's order. A
proposal's version is unique (an index): two replicas deciding one proposal from the same read
cannot both append its next version; the second is refused (``WrongState``)."""

from __future__ import annotations

from ...dreams import PENDING, DreamProposal
from ...errors import WrongState
from ...identity import Namespace
from ..duckdb.connection import NS_WHERE, ns_of, ns_params
from ..duckdb.dreams import _COLUMNS, DuckDBDreams, _proposal, proposal_params
from .connection import PgConnection

# Each proposal's newest version, with when it was queued and the row that queued it.
_NEWEST = (
    f"SELECT DISTINCT ON (proposal_id) {_COLUMNS}, "
    "min(recorded_at) OVER (PARTITION BY proposal_id) AS first_at, "
    "min(ctid) FILTER (WHERE version = 1) OVER (PARTITION BY proposal_id) AS first_row "
    "FROM dream_proposals WHERE {where} ORDER BY proposal_id, version DESC"
)


class PgDreams(DuckDBDreams):
    """``DreamsStore`` over the authority's pool."""

    _event_at = "(body::jsonb ->> 'recorded_at')::timestamptz"

    def __init__(self, db: PgConnection) -> None:
        super().__init__(db)  # type: ignore[arg-type]  # the same reads

    def record(self, proposal: DreamProposal) -> None:
        p = proposal
        with self._db.tx() as tx:
            added = tx.execute(
                f"INSERT INTO dream_proposals ({_COLUMNS}) VALUES ({', '.join('?' * 20)}) "
                "ON CONFLICT (tenant, proposal_id, version) DO NOTHING",
                proposal_params(p),
            ).rowcount
            if not added:
                raise WrongState(
                    f"proposal {p.proposal_id} already has a version {p.version}: it was decided meanwhile",
                    key=p.proposal_id,
                )

    def proposals(self, namespace: Namespace, status: str | None = None) -> list[DreamProposal]:
        # In the order they were queued: the first version's instant, then its place in the table
        # (its version-1 row's ctid where DuckDB reads the rowid: a tie only within one instant).
        rows = self._db.dicts(
            f"SELECT * FROM ({_NEWEST.format(where=NS_WHERE)}) p WHERE ?::text IS NULL OR status = ? "
            "ORDER BY first_at, first_row, proposal_id",
            [*ns_params(namespace), status, status],
        )
        return [_proposal(r) for r in rows]

    def pending_namespaces(self) -> list[Namespace]:
        rows = self._db.rows(
            f"SELECT DISTINCT tenant, scope, owner_id FROM ({_NEWEST.format(where='TRUE')}) p WHERE status = ? "
            "ORDER BY 1, 2, 3",
            [PENDING],
        )
        return [ns_of(*r) for r in rows]
