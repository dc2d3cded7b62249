"""What categories and links keep beside the log: each namespace's category taxonomy, the category
links of its rows (by key), and operator edges between its rows (by fact id). Each is a log of
versions, appended in an audited transaction; the newest version of a name, pair or edge is its
state."""

from __future__ import annotations

from typing import Protocol, Sequence

from ..audit import AuditEntry
from ..identity import Namespace
from ..write.categories import Category, CategoryLink, MemoryLink


class CategoryStore(Protocol):
    def define(self, namespace: Namespace, category: Category, audit: AuditEntry) -> Category:
        """Append the category's next version (``category.version`` is ignored) and answer it."""
        ...

    def categories(self, namespace: Namespace) -> list[Category]:
        """The namespace's taxonomy: each name's newest version, by name."""
        ...

    def category_links(self, namespace: Namespace, keys: Sequence[str] | None = None) -> list[CategoryLink]:
        """Each (key, category) pair's newest version, assigned or rescinded: of ``keys``, or of
        every key of the namespace. By key, then category."""
        ...

    def put_category_links(self, namespace: Namespace, links: Sequence[CategoryLink], audit: AuditEntry) -> None:
        """Append each pair's next version (``link.version`` is ignored)."""
        ...

    def links(self, namespace: Namespace, fact_ids: Sequence[str]) -> list[MemoryLink]:
        """Each edge's newest version that has one of ``fact_ids`` at either end, linked or not."""
        ...

    def put_links(self, namespace: Namespace, links: Sequence[MemoryLink], audit: AuditEntry) -> None:
        """Append each edge's next version (``link.version`` is ignored), in one transaction."""
        ...
