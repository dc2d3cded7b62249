"""The entity graph's tables in the store: the follow applied inside a write's transaction, and reads.

A mixin of ``DuckDBStore``. ``follow_graph`` runs inside ``apply`` after the version rows are in,
so a fact's row and its triples (the two halves a placed fact is written as) commit together or
not at all. The decisions are the pure functions of ``memory_core.graph``; this module only reads
what they need and writes what they decide.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any, Callable, Iterable, Sequence

import duckdb

from ..graph.follow import GraphChanges, Link, LinkedObservation, follow, holds_graph
from ..graph.model import Observation
from ..graph.order import changed_ends, fallback, with_ends
from ..identity import Namespace
from ..model import FactVersion
from .schema import COLS, row_to_version, utc

_NS = "tenant = ? AND scope = ? AND owner_id = ?"
_OBS_COLS = (
    "triple_id",
    "subject",
    "relation",
    "object",
    "start_at",
    "dated",
    "valid_to",
    "seen_at",
    "ended_at",
    "end_reason",
    "origin",
    "restore_id",
    "fact_class",
)
_OBS = ", ".join(f"t.{c}" for c in _OBS_COLS)
_LATEST_OF = (
    f"SELECT {COLS} FROM memory_versions WHERE list_contains(?, fact_id) "
    "QUALIFY row_number() OVER (PARTITION BY fact_id ORDER BY version DESC) = 1"
)


def _ns(ns: Namespace) -> list[Any]:
    return [ns.tenant, ns.scope.value, ns.owner_id]


def _observation(row: Sequence[Any]) -> Observation:
    r = dict(zip(_OBS_COLS, row))
    return Observation(
        r["triple_id"],
        r["subject"],
        r["relation"],
        r["object"],
        utc(r["start_at"]),
        bool(r["dated"]),
        utc(r["valid_to"]),
        utc(r["seen_at"]),
        utc(r["ended_at"]),
        r["end_reason"],
        r["origin"],
        r["restore_id"],
        r["fact_class"],
    )


class GraphTables:
    # Relations the tenant declared single-valued; the Memory wires its write configuration in.
    single_valued: Callable[[str], frozenset[str]] = staticmethod(lambda tenant: frozenset())  # type: ignore[assignment]
    graph_new_id: Callable[[], str] = staticmethod(lambda: os.urandom(16).hex())  # type: ignore[assignment]
    # Facts with a graph link (a superset after a rollback or a redaction: it only saves queries).
    _linked_facts: set[str] | None = None

    # -- the follow, inside a write's transaction ----------------------------------------------

    def follow_graph(self, con: duckdb.DuckDBPyConnection, rows: Sequence[FactVersion]) -> None:
        """A write's rows touch the graph only when one states relations or its fact is linked:
        every other write (most of them) costs no graph query."""
        if self._linked_facts is None:
            self._linked_facts = {r[0] for r in con.execute("SELECT DISTINCT fact_id FROM graph_links").fetchall()}
        if not any(r.relations or r.fact_id in self._linked_facts for r in rows):
            return
        newest: dict[str, FactVersion] = {}
        for row in rows:
            if row.fact_id not in newest or newest[row.fact_id].version < row.version:
                newest[row.fact_id] = row
        by_ns: dict[Namespace, list[FactVersion]] = {}
        for row in newest.values():
            by_ns.setdefault(Namespace(row.tenant, row.scope, row.owner_id), []).append(row)
        for ns, facts in by_ns.items():
            self._follow_namespace(con, ns, sorted(facts, key=lambda r: (r.created_at, r.version, r.key)))

    def _follow_namespace(self, con: duckdb.DuckDBPyConnection, ns: Namespace, rows: list[FactVersion]) -> None:
        linked = self._linked(con, ns, [r.fact_id for r in rows])
        triples = {rel.triple for r in rows for rel in r.relations}
        triples |= {
            (lo.observation.subject, lo.observation.relation, lo.observation.object)
            for los in linked.values()
            for lo in los
        }
        open_by_triple = self._open_observations(con, ns, triples)
        now = max(r.created_at for r in rows)
        holders = self._holders(con, ns, {lo.observation.triple_id for los in linked.values() for lo in los}, now)
        changes = follow(rows, linked, open_by_triple, lambda t: holders.get(t, set()), self.graph_new_id)
        self._write_changes(con, ns, changes, now)
        single = self.single_valued(ns.tenant)
        for subject, relation in sorted(changes.groups):
            if relation in single:
                self._repair_group(con, ns, subject, relation, now)

    def _linked(self, con, ns: Namespace, fact_ids: list[str]) -> dict[str, list[LinkedObservation]]:
        sql = (
            f"SELECT {_OBS}, l.fact_id, l.key, l.content_sha256, l.link_kind, l.linked_at FROM graph_links l "
            "JOIN graph_triples t USING (tenant, scope, owner_id, triple_id) "
            "WHERE l.tenant = ? AND l.scope = ? AND l.owner_id = ? AND list_contains(?, l.fact_id)"
        )
        out: dict[str, list[LinkedObservation]] = {}
        for row in con.execute(sql, [*_ns(ns), fact_ids]).fetchall():
            obs = _observation(row[: len(_OBS_COLS)])
            fact_id, key, sha, kind, at = row[len(_OBS_COLS) :]
            out.setdefault(fact_id, []).append(LinkedObservation(obs, Link(obs.triple_id, fact_id, key, sha, kind, at)))
        return out

    def _open_observations(self, con, ns: Namespace, triples: set[tuple[str, str, str]]):
        if not triples:
            return {}
        sql = f"SELECT {_OBS} FROM graph_triples t WHERE {_NS} AND ended_at IS NULL AND list_contains(?, subject)"
        out: dict[tuple[str, str, str], list] = {}
        for row in con.execute(sql, [*_ns(ns), sorted({t[0] for t in triples})]).fetchall():
            obs = _observation(row)
            if (obs.subject, obs.relation, obs.object) in triples:
                out.setdefault((obs.subject, obs.relation, obs.object), []).append(obs)
        return out

    def _holders(self, con, ns: Namespace, triple_ids: Iterable[str], now: datetime) -> dict[str, set[str]]:
        """For each observation, the facts whose newest row (this write's included) holds and links it."""
        triple_ids = sorted(triple_ids)
        if not triple_ids:
            return {}
        links = con.execute(
            f"SELECT triple_id, fact_id FROM graph_links WHERE {_NS} AND list_contains(?, triple_id)",
            [*_ns(ns), triple_ids],
        ).fetchall()
        facts = sorted({f for _, f in links})
        latest = {r.fact_id: r for r in map(row_to_version, con.execute(_LATEST_OF, [facts]).fetchall())}
        out: dict[str, set[str]] = {}
        for triple_id, fact_id in links:
            row = latest.get(fact_id)
            if row is not None and holds_graph(row, now):
                out.setdefault(triple_id, set()).add(fact_id)
        return out

    def _write_changes(self, con, ns: Namespace, changes: GraphChanges, now: datetime) -> None:
        base = _ns(ns)
        for o in changes.observations:
            con.execute(
                "INSERT INTO graph_triples VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    *base,
                    o.triple_id,
                    o.subject,
                    o.relation,
                    o.object,
                    o.start,
                    o.dated,
                    o.valid_to,
                    o.seen_at,
                    o.ended_at,
                    o.end_reason,
                    o.origin,
                    o.restore_id,
                    o.fact_class,
                ],
            )
        for link in changes.links:
            con.execute(
                "INSERT INTO graph_links VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [*base, link.triple_id, link.fact_id, link.key, link.content_sha256, link.link_kind, link.linked_at],
            )
            if self._linked_facts is not None:
                self._linked_facts.add(link.fact_id)
        self._set_ends(con, ns, changes.ends)
        for entity, entity_type in sorted(changes.entities.items()):
            known = con.execute(
                f"SELECT entity_type FROM graph_entities WHERE {_NS} AND entity_id = ?", [*base, entity]
            ).fetchall()
            types = {t for (t,) in known}
            if not known or (entity_type is not None and entity_type not in types):
                con.execute("INSERT INTO graph_entities VALUES (?, ?, ?, ?, ?, ?)", [*base, entity, entity_type, now])

    def _set_ends(self, con, ns: Namespace, ends: dict[str, tuple[datetime | None, str | None]]) -> None:
        for triple_id, (ended_at, reason) in sorted(ends.items()):
            con.execute(
                f"UPDATE graph_triples SET ended_at = ?, end_reason = ? WHERE {_NS} AND triple_id = ?",
                [ended_at, reason, *_ns(ns), triple_id],
            )

    def _repair_group(self, con, ns: Namespace, subject: str, relation: str, now: datetime) -> None:
        """The interval repair of one single-valued relation, then the one-value-current fallback."""
        sql = f"SELECT {_OBS} FROM graph_triples t WHERE {_NS} AND subject = ? AND relation = ?"
        observations = [_observation(r) for r in con.execute(sql, [*_ns(ns), subject, relation]).fetchall()]
        ends = changed_ends(observations)
        self._set_ends(con, ns, ends)
        holders = self._holders(con, ns, [o.triple_id for o in observations], now)
        marker = fallback(with_ends(observations, ends), set(holders), now, self.graph_new_id())
        if marker is None:
            return
        held_by = set().union(
            *(holders[o.triple_id] for o in observations if o.object == marker.object and o.triple_id in holders)
        )
        keys = dict(
            con.execute(
                f"SELECT fact_id, any_value(key) FROM graph_links WHERE {_NS} AND list_contains(?, fact_id) "
                "GROUP BY fact_id",
                [*_ns(ns), sorted(held_by)],
            ).fetchall()
        )
        latest = {r.fact_id: r for r in map(row_to_version, con.execute(_LATEST_OF, [sorted(held_by)]).fetchall())}
        changes = GraphChanges(
            observations=[marker],
            links=[
                Link(marker.triple_id, f, keys[f], latest[f].content_sha256, "stated", now) for f in sorted(held_by)
            ],
        )
        self._write_changes(con, ns, changes, now)
        self._set_ends(con, ns, changed_ends([*with_ends(observations, ends), marker]))

    def forget_graph_of(self, con, fact_ids: Sequence[str]) -> None:
        """Redaction: drop the links of the given facts, and the triples no other fact links."""
        con.execute("DELETE FROM graph_links WHERE list_contains(?, fact_id)", [list(fact_ids)])
        con.execute(
            "DELETE FROM graph_triples t WHERE NOT EXISTS (SELECT 1 FROM graph_links l WHERE "
            "l.tenant = t.tenant AND l.scope = t.scope AND l.owner_id = t.owner_id AND l.triple_id = t.triple_id)"
        )
        con.execute(
            "DELETE FROM graph_entities e WHERE NOT EXISTS (SELECT 1 FROM graph_triples t WHERE "
            "t.tenant = e.tenant AND t.scope = e.scope AND t.owner_id = e.owner_id AND "
            "(t.subject = e.entity_id OR t.object = e.entity_id))"
        )

    # -- reads ---------------------------------------------------------------------------------

    def graph_observations(
        self, ns: Namespace, entities: Sequence[str], as_of: datetime, *, as_subject_only: bool = False
    ) -> list[tuple[Any, list[Link]]]:
        """The observations current at ``as_of`` that name one of ``entities``, with their links."""
        where = (
            "list_contains(?, subject)"
            if as_subject_only
            else "(list_contains(?, subject) OR list_contains(?, object))"
        )
        params = [*_ns(ns), list(entities)] + ([] if as_subject_only else [list(entities)])
        sql = (
            f"SELECT {_OBS} FROM graph_triples t WHERE {_NS} AND {where} AND start_at <= ? "
            "AND ? < least(coalesce(valid_to, 'infinity'::TIMESTAMPTZ), coalesce(ended_at, 'infinity'::TIMESTAMPTZ)) "
            "ORDER BY subject, relation, start_at, seen_at, object"
        )
        observations = [_observation(r) for r in self._rows(sql, [*params, as_of, as_of])]
        links: dict[str, list[Link]] = {}
        if observations:
            for row in self._rows(
                f"SELECT triple_id, fact_id, key, content_sha256, link_kind, linked_at FROM graph_links "
                f"WHERE {_NS} AND list_contains(?, triple_id) ORDER BY linked_at, key",
                [*_ns(ns), [o.triple_id for o in observations]],
            ):
                links.setdefault(row[0], []).append(Link(*row))
        return [(o, links.get(o.triple_id, [])) for o in observations]

    def entity_types(self, ns: Namespace, entity: str) -> list[str]:
        rows = self._rows(
            f"SELECT DISTINCT entity_type FROM graph_entities WHERE {_NS} AND entity_id = ? "
            "AND entity_type IS NOT NULL ORDER BY 1",
            [*_ns(ns), entity],
        )
        return [r[0] for r in rows]

    def graph_counts(self) -> dict[str, int]:
        return {
            t: int(self._rows(f"SELECT count(*) FROM {t}", [])[0][0])
            for t in ("graph_entities", "graph_triples", "graph_links")
        }
