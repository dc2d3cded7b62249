"""``CategoryStore`` over the home's DuckDB file: ``categories``, ``category_links`` and
``memory_links``, each a log of versions (``schema_categories``). Every change is appended in an
audited transaction (one hash-only audit row), under the store's write lock, so the next version
of a name, a pair or an edge is read and taken by one writer at a time."""

from __future__ import annotations

from typing import Any, Sequence

from ...audit import AuditEntry
from ...identity import Namespace
from ...write.categories import Category, CategoryLink, MemoryLink
from .audit_chain import AuditChain
from .connection import NS_WHERE, DuckDBConnection, ns_params
from .schema import utc
from .schema_categories import CATEGORY_COLUMNS, CATEGORY_LINK_COLUMNS, MEMORY_LINK_COLUMNS

_EDGE = ("fact_id", "other_fact_id", "relation")


def _newest(table: str, columns: Sequence[str], group: Sequence[str], where: str) -> str:
    """Each group's newest version (a window, which both engines run as written)."""
    return (
        f"SELECT {', '.join(columns)} FROM (SELECT {', '.join(columns)}, row_number() OVER "
        f"(PARTITION BY {', '.join(group)} ORDER BY version DESC) AS newest FROM {table} WHERE {where}) t "
        "WHERE newest = 1"
    )


def _marks(columns: Sequence[str]) -> str:
    return ", ".join("?" * len(columns))


class DuckDBCategories:
    # A column among a list of values, in this engine's words (PostgreSQL: ``= ANY(?)``).
    _among = "list_contains(?, {column})"

    def __init__(self, db: DuckDBConnection, audit: AuditChain) -> None:
        self._db = db
        self._audit = audit

    @staticmethod
    def _next(tx: Any, table: str, where: str, params: list[Any]) -> int:
        found = tx.execute(f"SELECT coalesce(max(version), 0) FROM {table} WHERE {where}", params).fetchall()
        return int(found[0][0]) + 1

    # -- the taxonomy ----------------------------------------------------------------------------

    def define(self, namespace: Namespace, category: Category, audit: AuditEntry) -> Category:
        ns = ns_params(namespace)
        with self._audit.transaction([audit]) as tx:
            version = self._next(tx, "categories", f"{NS_WHERE} AND name = ?", [*ns, category.name])
            tx.execute(
                f"INSERT INTO categories ({', '.join(CATEGORY_COLUMNS)}) VALUES ({_marks(CATEGORY_COLUMNS)})",
                [*ns, category.name, version, category.description, category.defined_by, category.defined_at],
            )
        return Category(category.name, category.description, version, category.defined_by, category.defined_at)

    def categories(self, namespace: Namespace) -> list[Category]:
        rows = self._db.rows(
            _newest("categories", CATEGORY_COLUMNS, ("name",), NS_WHERE) + " ORDER BY name", ns_params(namespace)
        )
        return [Category(r[3], r[5], int(r[4]), r[6], utc(r[7])) for r in rows]

    # -- category links --------------------------------------------------------------------------

    def category_links(self, namespace: Namespace, keys: Sequence[str] | None = None) -> list[CategoryLink]:
        where, params = NS_WHERE, ns_params(namespace)
        if keys is not None:
            where += " AND " + self._among.format(column="key")
            params.append(list(keys))
        rows = self._db.rows(
            _newest("category_links", CATEGORY_LINK_COLUMNS, ("key", "category"), where) + " ORDER BY key, category",
            params,
        )
        return [CategoryLink(r[3], r[4], r[6], int(r[5]), r[7], r[8], utc(r[9])) for r in rows]

    def put_category_links(self, namespace: Namespace, links: Sequence[CategoryLink], audit: AuditEntry) -> None:
        ns = ns_params(namespace)
        with self._audit.transaction([audit]) as tx:
            for link in links:
                pair = [*ns, link.key, link.category]
                version = self._next(tx, "category_links", f"{NS_WHERE} AND key = ? AND category = ?", pair)
                tx.execute(
                    f"INSERT INTO category_links ({', '.join(CATEGORY_LINK_COLUMNS)}) "
                    f"VALUES ({_marks(CATEGORY_LINK_COLUMNS)})",
                    [*pair, version, link.state, link.origin, link.changed_by, link.changed_at],
                )

    # -- operator links --------------------------------------------------------------------------

    def links(self, namespace: Namespace, fact_ids: Sequence[str]) -> list[MemoryLink]:
        among = f"({self._among.format(column='fact_id')} OR {self._among.format(column='other_fact_id')})"
        ids = list(fact_ids)
        rows = self._db.rows(
            _newest("memory_links", MEMORY_LINK_COLUMNS, _EDGE, f"{NS_WHERE} AND {among}")
            + " ORDER BY changed_at, key, other_key, relation",
            [*ns_params(namespace), ids, ids],
        )
        return [MemoryLink(r[7], r[3], r[8], r[4], r[5], r[9], int(r[6]), r[10], utc(r[11])) for r in rows]

    def put_links(self, namespace: Namespace, links: Sequence[MemoryLink], audit: AuditEntry) -> None:
        ns = ns_params(namespace)
        with self._audit.transaction([audit]) as tx:
            for link in links:
                edge = [*ns, link.fact_id, link.other_fact_id, link.relation]
                where = f"{NS_WHERE} AND fact_id = ? AND other_fact_id = ? AND relation = ?"
                version = self._next(tx, "memory_links", where, edge)
                tx.execute(
                    f"INSERT INTO memory_links ({', '.join(MEMORY_LINK_COLUMNS)}) "
                    f"VALUES ({_marks(MEMORY_LINK_COLUMNS)})",
                    [*edge, version, link.key, link.other_key, link.state, link.changed_by, link.changed_at],
                )
