"""The graph follow of a write, computed under the session's lock before its transaction.

A write's rows touch the graph only when one states relations or its fact already holds a link:
every other write (most of them) reads nothing here. For the others, the graph port reads what
the follow needs and ``graph.plan.plan_follow`` decides; the answer travels in the write's
``WriteBatch`` and the store applies it inside the transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..graph.model import DOCUMENTED_IN
from ..graph.plan import GraphWrite, plan_follow
from ..identity import Namespace
from ..model import FactVersion

if TYPE_CHECKING:
    from .core import Session


def follow_graph(session: Session, rows: Sequence[FactVersion]) -> tuple[GraphWrite, ...]:
    if not rows:
        return ()
    if not any(r.relations for r in rows) and not session.graph.linked([r.fact_id for r in rows]):
        return ()
    newest: dict[str, FactVersion] = {}
    for row in rows:
        if row.fact_id not in newest or newest[row.fact_id].version < row.version:
            newest[row.fact_id] = row
    by_ns: dict[Namespace, list[FactVersion]] = {}
    for row in newest.values():
        by_ns.setdefault(Namespace(row.tenant, row.scope, row.owner_id), []).append(row)
    out = []
    for ns, facts in by_ns.items():
        facts.sort(key=lambda r: (r.created_at, r.version, r.key))
        relations = [rel for r in facts for rel in r.relations]
        entities = {rel.subject for rel in relations} | {
            rel.object for rel in relations if rel.relation != DOCUMENTED_IN
        }
        single = session.single_valued(ns.tenant)
        inputs = session.graph.follow_inputs(
            ns, [r.fact_id for r in facts], {rel.triple for rel in relations}, entities, single
        )
        change = plan_follow(ns, facts, inputs, single, session.new_id)
        if change:
            out.append(change)
    return tuple(out)
