"""The entity graph's tables: what a write's follow reads beforehand, the graph write applied in
the write's transaction, and the graph reads.

The decisions are the pure functions of ``memory_core.graph`` (``plan.plan_follow``); this module
reads what they need (``follow_inputs``) and writes what they decided (``write``), so a fact's
row and its triples (the two halves a placed fact is written as) commit together or not at all.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Sequence

from ...graph.follow import Link, LinkedObservation
from ...graph.model import DOCUMENTED_IN, Observation
from ...graph.plan import GraphInputs, GraphWrite
from ...identity import Namespace
from .audit_ledger import AuditedTx
from .connection import NS_WHERE, DuckDBConnection, ns_params
from .schema import COLS, LATEST, TRIPLE_COLUMNS, row_to_version, utc

_OBS_COLS = TRIPLE_COLUMNS
_OBS = ", ".join(f"t.{c}" for c in _OBS_COLS)
_LINK_COLS = "triple_id, fact_id, key, content_sha256, link_kind, linked_at"
_LATEST_OF = LATEST.format(cols=COLS, where="list_contains(?, fact_id)")


def _observation(row: Sequence[Any]) -> Observation:
    r = dict(zip(_OBS_COLS, row))
    return Observation(
        r["triple_id"],
        r["subject"],
        r["relation"],
        r["object"],
        utc(r["valid_at"]),
        bool(r["dated"]),
        utc(r["invalid_at"]),
        utc(r["seen_at"]),
        utc(r["ended_at"]),
        r["end_reason"],
        r["origin"],
        r["restore_id"],
        r["fact_class"],
    )


class DuckDBGraph:
    """``GraphStore`` over the home's connection.

    What an engine says its own way is kept apart (``_in``, ``_latest_of``, ``_reads``,
    ``_subjects_or_groups``, ``linked``): the PostgreSQL graph (``postgres.graph``) says those
    and shares the rest."""

    _in = "list_contains(?, {})"  # a column is one of a list parameter
    _latest_of = _LATEST_OF

    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db
        # Facts with a graph link (a superset after a rollback or a redaction: it only saves queries).
        self._linked_facts: set[str] | None = None

    def linked(self, fact_ids: Sequence[str]) -> bool:
        with self._db.lock:
            if self._linked_facts is None:
                self._linked_facts = {r[0] for r in self._db.rows("SELECT DISTINCT fact_id FROM graph_links")}
            known = self._linked_facts
        return any(f in known for f in fact_ids)

    def _forget_cache(self) -> None:
        with self._db.lock:
            self._linked_facts = None

    def _reads(self) -> AbstractContextManager[Any]:
        """Held over the follow's reads, so they read one state of the graph."""
        return self._db.lock

    def _subjects_or_groups(self, subjects: list[str], pairs: list[tuple[str, str]]) -> tuple[str, list[Any]]:
        """The subjects' open observations, or any of a (subject, relation) group: its filter."""
        where = f"((ended_at IS NULL AND {self._in.format('subject')}) OR list_contains(?, [subject, relation]))"
        return where, [subjects, [list(p) for p in pairs]]

    # -- the follow: its reads, and its write inside the write's transaction ---------------------

    def follow_inputs(
        self,
        namespace: Namespace,
        fact_ids: Sequence[str],
        triples: set[tuple[str, str, str]],
        entities: set[str],
        single_valued: frozenset[str],
    ) -> GraphInputs:
        ns = ns_params(namespace)
        with self._reads():
            linked = self._linked(ns, list(fact_ids))
            involved = set(triples) | {
                (lo.observation.subject, lo.observation.relation, lo.observation.object)
                for los in linked.values()
                for lo in los
            }
            observations = {lo.observation.triple_id: lo.observation for los in linked.values() for lo in los}
            subjects = sorted({t[0] for t in involved})
            pairs = sorted({(s, r) for s, r, _ in involved if r in single_valued})
            if subjects:
                # One query for both: the subjects' open observations, and every observation
                # (ended too) of a single-valued group. Added in the order separate queries took.
                where, params = self._subjects_or_groups(subjects, pairs)
                sql = f"SELECT {_OBS} FROM graph_triples t WHERE {NS_WHERE} AND {where}"
                found = [_observation(r) for r in self._db.rows(sql, [*ns, *params])]
                wanted = set(subjects)
                groups: dict[tuple[str, str], list[Observation]] = {}
                for obs in found:
                    if obs.ended_at is None and obs.subject in wanted:
                        observations.setdefault(obs.triple_id, obs)
                    groups.setdefault((obs.subject, obs.relation), []).append(obs)
                for pair in pairs:
                    for obs in groups.get(pair, ()):
                        observations[obs.triple_id] = obs
            links: list[Link] = []
            if observations:
                sql = f"SELECT {_LINK_COLS} FROM graph_links WHERE {NS_WHERE} AND {self._in.format('triple_id')}"
                links = [Link(*row) for row in self._db.rows(sql, [*ns, sorted(observations)])]
            facts = sorted({link.fact_id for link in links})
            states = (
                {r.fact_id: r for r in map(row_to_version, self._db.rows(self._latest_of, [facts]))} if facts else {}
            )
            types: dict[str, set[str | None]] = {}
            if entities:
                sql = (
                    f"SELECT entity_id, entity_type FROM graph_entities WHERE {NS_WHERE} "
                    f"AND {self._in.format('entity_id')}"
                )
                for entity, entity_type in self._db.rows(sql, [*ns, sorted(entities)]):
                    types.setdefault(entity, set()).add(entity_type)
        return GraphInputs(
            linked, list(observations.values()), links, states, {e: frozenset(t) for e, t in types.items()}
        )

    def _linked(self, ns: list[Any], fact_ids: list[str]) -> dict[str, list[LinkedObservation]]:
        sql = (
            f"SELECT {_OBS}, l.fact_id, l.key, l.content_sha256, l.link_kind, l.linked_at FROM graph_links l "
            "JOIN graph_triples t USING (tenant, scope, owner_id, triple_id) "
            f"WHERE l.tenant = ? AND l.scope = ? AND l.owner_id = ? AND {self._in.format('l.fact_id')}"
        )
        out: dict[str, list[LinkedObservation]] = {}
        for row in self._db.rows(sql, [*ns, fact_ids]):
            obs = _observation(row[: len(_OBS_COLS)])
            fact_id, key, sha, kind, at = row[len(_OBS_COLS) :]
            out.setdefault(fact_id, []).append(LinkedObservation(obs, Link(obs.triple_id, fact_id, key, sha, kind, at)))
        return out

    def write(self, tx: AuditedTx, change: GraphWrite) -> None:
        """Apply one namespace's graph write, inside the caller's audited transaction (each
        statement records the rows it touches in the audit ledger)."""
        base = ns_params(change.namespace)
        new_triples = [o.triple_id for o in change.observations]
        ended = sorted(change.ends)
        link_triples = sorted({link.triple_id for link in change.links})
        entities = sorted({entity for entity, _ in change.entities})
        where = f"{NS_WHERE} AND {self._in.format('triple_id')}"
        entity_where = f"{NS_WHERE} AND {self._in.format('entity_id')}"
        # Rows about to change, as they stand (new triples have none yet; links and entities may
        # repeat an earlier write's, so their whole matching set is recorded before and after).
        if ended:
            tx.removed("graph_triples", where, [*base, ended])
        if link_triples:
            tx.removed("graph_links", where, [*base, link_triples])
        if entities:
            tx.removed("graph_entities", entity_where, [*base, entities])
        for o in change.observations:
            tx.execute(
                "INSERT INTO graph_triples VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    *base,
                    o.triple_id,
                    o.subject,
                    o.relation,
                    o.object,
                    o.valid_at,
                    o.dated,
                    o.invalid_at,
                    o.seen_at,
                    o.ended_at,
                    o.end_reason,
                    o.origin,
                    o.restore_id,
                    o.fact_class,
                ],
            )
        for link in change.links:
            tx.execute(
                "INSERT INTO graph_links VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [*base, link.triple_id, link.fact_id, link.key, link.content_sha256, link.link_kind, link.linked_at],
            )
            if self._linked_facts is not None:
                self._linked_facts.add(link.fact_id)
        for triple_id in ended:
            ended_at, reason = change.ends[triple_id]
            tx.execute(
                f"UPDATE graph_triples SET ended_at = ?, end_reason = ? WHERE {NS_WHERE} AND triple_id = ?",
                [ended_at, reason, *base, triple_id],
            )
        for entity, entity_type in change.entities:
            tx.execute("INSERT INTO graph_entities VALUES (?, ?, ?, ?, ?, ?)", [*base, entity, entity_type, change.at])
        triples = sorted(set(new_triples) | set(ended))
        if triples:
            tx.added("graph_triples", where, [*base, triples])
        if link_triples:
            tx.added("graph_links", where, [*base, link_triples])
        if entities:
            tx.added("graph_entities", entity_where, [*base, entities])

    @classmethod
    def forget(cls, tx: AuditedTx, fact_ids: Sequence[str]) -> None:
        """Redaction, inside its audited transaction: drop the links of the given facts, and the
        triples (and entities) no other fact links."""
        links = cls._in.format("fact_id")
        tx.removed("graph_links", links, [list(fact_ids)])
        tx.execute(f"DELETE FROM graph_links WHERE {links}", [list(fact_ids)])
        orphan_triples = (
            "NOT EXISTS (SELECT 1 FROM graph_links l WHERE l.tenant = graph_triples.tenant AND "
            "l.scope = graph_triples.scope AND l.owner_id = graph_triples.owner_id AND "
            "l.triple_id = graph_triples.triple_id)"
        )
        tx.removed("graph_triples", orphan_triples)
        tx.execute(f"DELETE FROM graph_triples WHERE {orphan_triples}")
        orphan_entities = (
            "NOT EXISTS (SELECT 1 FROM graph_triples t WHERE t.tenant = graph_entities.tenant AND "
            "t.scope = graph_entities.scope AND t.owner_id = graph_entities.owner_id AND "
            "(t.subject = graph_entities.entity_id OR t.object = graph_entities.entity_id))"
        )
        tx.removed("graph_entities", orphan_entities)
        tx.execute(f"DELETE FROM graph_entities WHERE {orphan_entities}")

    # -- reads -----------------------------------------------------------------------------------

    def observations(
        self, namespace: Namespace, entities: Sequence[str], as_of: datetime, *, as_subject_only: bool = False
    ) -> list[tuple[Observation, list[Link]]]:
        """The observations current at ``as_of`` that name one of ``entities``, with their links."""
        ns = ns_params(namespace)
        where = (
            self._in.format("subject")
            if as_subject_only
            else f"({self._in.format('subject')} OR {self._in.format('object')})"
        )
        params = [*ns, list(entities)] + ([] if as_subject_only else [list(entities)])
        sql = (
            f"SELECT {_OBS} FROM graph_triples t WHERE {NS_WHERE} AND {where} AND valid_at <= ? "
            "AND ? < least(coalesce(invalid_at, 'infinity'::TIMESTAMPTZ), coalesce(ended_at, 'infinity'::TIMESTAMPTZ)) "
            "ORDER BY subject, relation, valid_at, seen_at, object"
        )
        found = [_observation(r) for r in self._db.rows(sql, [*params, as_of, as_of])]
        links: dict[str, list[Link]] = {}
        if found:
            for row in self._db.rows(
                f"SELECT {_LINK_COLS} FROM graph_links WHERE {NS_WHERE} AND {self._in.format('triple_id')} "
                "ORDER BY linked_at, key",
                [*ns, [o.triple_id for o in found]],
            ):
                links.setdefault(row[0], []).append(Link(*row))
        return [(o, links.get(o.triple_id, [])) for o in found]

    def current_observations(self, namespace: Namespace, as_of: datetime) -> list[Observation]:
        """Every observation of the namespace current at ``as_of`` but document links (a view's graph)."""
        sql = (
            f"SELECT {_OBS} FROM graph_triples t WHERE {NS_WHERE} AND relation <> ? AND valid_at <= ? "
            "AND ? < least(coalesce(invalid_at, 'infinity'::TIMESTAMPTZ), coalesce(ended_at, 'infinity'::TIMESTAMPTZ)) "
            "ORDER BY subject, relation, valid_at, seen_at, object"
        )
        return [_observation(r) for r in self._db.rows(sql, [*ns_params(namespace), DOCUMENTED_IN, as_of, as_of])]

    def entity_names(self, namespace: Namespace) -> frozenset[str]:
        rows = self._db.rows(
            f"SELECT subject FROM graph_triples WHERE {NS_WHERE} "
            f"UNION SELECT object FROM graph_triples WHERE {NS_WHERE} AND relation <> ?",  # a chunk is no entity
            [*ns_params(namespace), *ns_params(namespace), DOCUMENTED_IN],
        )
        return frozenset(r[0] for r in rows)

    def entity_types(self, namespace: Namespace, entity: str) -> list[str]:
        rows = self._db.rows(
            f"SELECT DISTINCT entity_type FROM graph_entities WHERE {NS_WHERE} AND entity_id = ? "
            "AND entity_type IS NOT NULL ORDER BY 1",
            [*ns_params(namespace), entity],
        )
        return [r[0] for r in rows]

    def counts(self) -> dict[str, int]:
        return {
            t: int(self._db.one(f"SELECT count(*) FROM {t}"))
            for t in ("graph_entities", "graph_triples", "graph_links")
        }
