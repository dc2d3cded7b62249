"""Categories and links on the Memory tool (``MemoryTool`` lists each op in its class body):
docs/write-path.md, "Categories and links"."""

from __future__ import annotations

from ..identity import Scope
from ..services.categories import CategoryService
from ..write.categories import DEFAULT_RELATION, Category, CategoryLink, MemoryLink


def category_define(self, name: str, *, description: str | None = None, scope: str | Scope = Scope.USER) -> Category:
    """Define a category of the scope's taxonomy (each scope has its own; a name is 1 to 64
    lower-case letters, digits and ``_ . : / -``), or change its description (a new version). The
    same definition again writes nothing."""
    return self._bound(CategoryService).define(name, description, scope)


def categories(self, *, scope: str | Scope = Scope.USER, key: str | None = None) -> list[Category]:
    """The scope's category taxonomy, by name; with ``key``, the categories the row at ``key``
    carries now (none when it holds no live row)."""
    return self._bound(CategoryService).categories(scope, key)


def assign_category(
    self, key: str, category: str, *, scope: str | Scope = Scope.USER, rescind: bool = False
) -> CategoryLink:
    """Give the live row at ``key`` a category of its scope's taxonomy (``CATEGORY_NOT_FOUND`` when
    the scope defines none of that name), or take it away (``rescind=True``). The link belongs to
    the key: a revision keeps it. A rescinded link stays rescinded: an import or an extraction
    naming the pair again does not add it back; only ``assign_category`` does."""
    return self._bound(CategoryService).assign(key, category, scope, rescind)


def link(
    self,
    key: str,
    other_key: str,
    *,
    relation: str = DEFAULT_RELATION,
    scope: str | Scope = Scope.USER,
    unlink: bool = False,
) -> list[MemoryLink]:
    """Link the live row at ``key`` to the live row at ``other_key`` of the same scope (an operator
    edge named ``relation``), between the facts they hold now: a retirement or a delete of either
    keeps the edge, and its Undo makes it live again. ``unlink=True`` removes every such edge
    between the two keys' facts. Answers the edges changed (or the edge as it already was)."""
    return self._bound(CategoryService).link(key, other_key, relation, scope, unlink)


def links(self, key: str, *, scope: str | Scope = Scope.USER) -> list[MemoryLink]:
    """The edges linking any fact ``key`` held (either end), each with whether its two ends' facts
    hold their keys now (``live``, ``other_live``)."""
    return self._bound(CategoryService).links(key, scope)
