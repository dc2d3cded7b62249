"""A search's filter value (``retrieval.filters.LegFilter``) in Lance's filter language.

The narrow form names only what Lance answers from bitmap indexes (the namespace, the kinds): a
leg runs under it and checks status and time on the rows it returns. The full form adds every
filter, for a leg that came up short (see ``retrieval.pipeline.admissible_top``).
"""

from __future__ import annotations

from typing import Sequence

from ...model import VISIBLE_STATUSES
from ...retrieval.filters import LegFilter
from ...temporal import micros
from .rows import namespace_key


def sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def fact_ids_in(fact_ids: Sequence[str]) -> str:
    """A filter naming these facts."""
    return "fact_id IN (" + ", ".join(sql_str(f) for f in fact_ids) + ")"


def namespace_of(where: LegFilter) -> str:
    """The index's ``namespace`` value of the filter's namespace."""
    ns = where.namespace
    return namespace_key(ns.tenant, ns.scope.value, ns.owner_id)


def render(where: LegFilter, *, full: bool) -> str:
    clauses = [
        f"namespace = {sql_str(namespace_of(where))}",
        "kind IN (" + ", ".join(sql_str(k.value) for k in sorted(where.kinds)) + ")",
    ]
    if not full:
        return " AND ".join(clauses)
    t = micros(where.as_of)
    clauses += [
        "status IN (" + ", ".join(sql_str(s) for s in VISIBLE_STATUSES) + ")",
        f"valid_at <= {t}",
        f"(invalid_at IS NULL OR invalid_at > {t})",
        f"(expires_at IS NULL OR expires_at > {micros(where.now)})",
    ]
    if where.observed_from is not None:
        clauses.append(f"observed_at >= {micros(where.observed_from)}")
    if where.observed_to is not None:
        clauses.append(f"observed_at < {micros(where.observed_to)}")
    return " AND ".join(clauses)
