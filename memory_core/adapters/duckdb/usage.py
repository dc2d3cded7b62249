"""``UsageStore`` over the home's DuckDB file: ``usage_exposures`` (a queue the fold consumes),
``usage_folded`` (its cursor in ``interactions``) and ``usage_totals`` (one row per fact). Derived
from the records, so not audited."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta
from typing import Sequence

from ...identity import Namespace
from ...retrieval.usage import Answered, Exposure, UsageTotals
from .connection import NS_WHERE, DuckDBConnection, ns_of, ns_params
from .schema import utc

# The interactions the fold reads: what was shown (a view, a context) and what was said of it.
_KINDS = ("render", "context", "feedback")


class DuckDBUsage:
    """Every search of a recipe with a usage prior reads its candidates' totals: the (recalls,
    negative) of a namespace's facts with any feedback are kept per namespace once read (a dict
    lookup per candidate, where a query cost about 3.5 ms: docs/benchmarks.md, 2026-12-03), and
    dropped by the fold's write and by an erasure (``_forget_cache``)."""

    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db
        self._said: dict[Namespace, dict[str, tuple[int, int]]] = {}
        self._lock = threading.Lock()

    def _forget_cache(self) -> None:
        with self._db.lock, self._lock:
            self._said.clear()

    def record_exposures(self, exposures: Sequence[Exposure]) -> None:
        if not exposures:
            return
        with self._db.tx() as con:
            # Under the connection's lock: no other flush takes the same positions.
            (after,) = con.execute("SELECT coalesce(max(seq), 0) FROM usage_exposures").fetchone()
            con.execute(
                "INSERT INTO usage_exposures SELECT unnest(?::BIGINT[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
                "unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::BIGINT[]), unnest(?::TIMESTAMPTZ[])",
                [
                    list(range(after + 1, after + 1 + len(exposures))),
                    [e.namespace.tenant for e in exposures],
                    [e.namespace.scope.value for e in exposures],
                    [e.namespace.owner_id for e in exposures],
                    [e.fact_id for e in exposures],
                    [e.count for e in exposures],
                    [e.last_seen for e in exposures],
                ],
            )

    def waiting_exposures(self) -> tuple[list[Exposure], int]:
        rows = self._db.rows(
            "SELECT tenant, scope, owner_id, fact_id, exposures, last_seen, seq FROM usage_exposures ORDER BY seq"
        )
        through = rows[-1][6] if rows else 0
        return [Exposure(ns_of(t, s, o), f, int(n), utc(at)) for t, s, o, f, n, at, _ in rows], int(through)

    def unfolded(self, lookback: timedelta) -> list[Answered]:
        kinds = ", ".join(f"'{k}'" for k in _KINDS)
        rows = self._db.rows(
            "SELECT interaction_id, tenant, kind, refs, feedback, asked_at FROM interactions i "
            f"WHERE kind IN ({kinds}) AND asked_at >= (SELECT coalesce(max(asked_at) - ?, '-infinity'::TIMESTAMPTZ) "
            "FROM usage_folded) AND NOT EXISTS (SELECT 1 FROM usage_folded f WHERE f.tenant = i.tenant "
            "AND f.interaction_id = i.interaction_id) ORDER BY asked_at, interaction_id",
            [lookback],
        )
        return [Answered(i, t, k, tuple(json.loads(refs)), fb, utc(at)) for i, t, k, refs, fb, at in rows]

    def totals_of(self, fact_ids: Sequence[str]) -> dict[str, UsageTotals]:
        if not fact_ids:
            return {}
        rows = self._db.rows(
            "SELECT tenant, scope, owner_id, fact_id, exposures, recalls, negative, last_seen FROM usage_totals "
            "WHERE fact_id IN (SELECT unnest(?::VARCHAR[]))",
            [list(fact_ids)],
        )
        return {
            f: UsageTotals(ns_of(t, s, o), f, int(e), int(r), int(n), utc(at) if at is not None else None)
            for t, s, o, f, e, r, n, at in rows
        }

    def totals(self, namespace: Namespace, fact_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        with self._lock:
            said = self._said.get(namespace)
        if said is None:
            # Loaded under the store's lock too: a fold cannot write between the query and the fill.
            with self._db.lock, self._lock:
                said = self._said.get(namespace)
                if said is None:
                    rows = self._db.rows(
                        f"SELECT fact_id, recalls, negative FROM usage_totals WHERE {NS_WHERE} "
                        "AND (recalls > 0 OR negative > 0)",
                        ns_params(namespace),
                    )
                    said = self._said[namespace] = {f: (int(r), int(n)) for f, r, n in rows}
        return {f: said[f] for f in fact_ids if f in said}

    def apply_fold(
        self,
        totals: Sequence[UsageTotals],
        exposures_through: int,
        folded: Sequence[Answered],
        lookback: timedelta,
        at: datetime,
    ) -> None:
        with self._db.tx() as con:
            self._forget_cache()
            if totals:
                # A fact's id is unique in the home: its one row is replaced by its new totals.
                con.execute("DELETE FROM usage_totals WHERE fact_id IN (SELECT unnest(?::VARCHAR[]))", [_ids(totals)])
                con.execute(
                    "INSERT INTO usage_totals SELECT unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
                    "unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::BIGINT[]), unnest(?::BIGINT[]), "
                    "unnest(?::BIGINT[]), unnest(?::TIMESTAMPTZ[]), ?",
                    [*totals_columns(totals), at],
                )
            con.execute("DELETE FROM usage_exposures WHERE seq <= ?", [exposures_through])
            if folded:
                con.execute(
                    "INSERT INTO usage_folded SELECT unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
                    "unnest(?::TIMESTAMPTZ[])",
                    [[a.tenant for a in folded], [a.interaction_id for a in folded], [a.at for a in folded]],
                )
                # The newest row stays (it is the cursor); ids older than the lookback cannot come again.
                con.execute(
                    "DELETE FROM usage_folded WHERE asked_at < (SELECT max(asked_at) - ? FROM usage_folded)",
                    [lookback],
                )


def _ids(totals: Sequence[UsageTotals]) -> list[str]:
    return [t.fact_id for t in totals]


def totals_columns(totals: Sequence[UsageTotals]) -> list[list]:
    """The totals as columns: tenant, scope, owner_id, fact_id, exposures, recalls, negative,
    last_seen (``usage_totals`` less its ``folded_at``)."""
    return [
        [t.namespace.tenant for t in totals],
        [t.namespace.scope.value for t in totals],
        [t.namespace.owner_id for t in totals],
        _ids(totals),
        [t.exposures for t in totals],
        [t.recalls for t in totals],
        [t.negative for t in totals],
        [t.last_seen for t in totals],
    ]
