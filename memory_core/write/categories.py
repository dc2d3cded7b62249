"""Categories and links as plain values: a namespace's category taxonomy, which rows carry which
category (by key), and operator edges between two rows (by fact id). The stores keep each as a
log of versions; the decisions here say what a change appends, and nothing else.

A category link the owner rescinded stays stored as ``rescinded``: an import or an extraction adds
only pairs never stored (``never_stored``), so the owner's call stands. An explicit
``assign_category`` is the owner's call too, and assigns it again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Mapping, Sequence

from ..errors import InvalidInput, NotFound
from ..inputs import text

# A category's name and a link's relation: lower-case words a person reads and a CLI types.
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.:/-]{0,63}$")
MAX_DESCRIPTION_CHARS = 500
ASSIGNED, RESCINDED = "assigned", "rescinded"
LINKED, UNLINKED = "linked", "unlinked"
# Who made a category link: the owner (``assign_category``), an import, an extraction.
ORIGINS = ("assign", "import", "extraction")
DEFAULT_RELATION = "related"


class CategoryNotFound(NotFound):
    """The namespace defines no category of that name (``category_define`` first). Here, not in
    ``errors``, beside the records it refuses for; the wire finds it as every ``MemcoreError``."""

    code = "CATEGORY_NOT_FOUND"


def category_name(value: object, field: str = "category") -> str:
    """A category's name (or a link's relation): 1 to 64 characters, lower-case letters, digits and
    ``_ . : / -``, starting with a letter or a digit. Refused, never rewritten."""
    if not isinstance(value, str) or not _NAME.match(value):
        raise InvalidInput(
            f"{field} must be 1 to 64 characters: lower-case letters, digits and _ . : / -, "
            "starting with a letter or a digit",
            field=field,
        )
    return value


def description_text(value: object) -> str | None:
    found = text(value, "description", optional=True, max_chars=MAX_DESCRIPTION_CHARS)
    return found.strip() if found is not None else None


@dataclass(frozen=True, slots=True)
class Category:
    """One category of a namespace's taxonomy, as last defined."""

    name: str
    description: str | None
    version: int  # 1 when first defined; each changed description appends one
    defined_by: str
    defined_at: datetime


@dataclass(frozen=True, slots=True)
class CategoryLink:
    """Whether ``key`` carries ``category`` (``assigned`` or ``rescinded``), as last changed."""

    key: str
    category: str
    state: str
    version: int
    origin: str  # assign | import | extraction
    changed_by: str
    changed_at: datetime

    @property
    def assigned(self) -> bool:
        return self.state == ASSIGNED


@dataclass(frozen=True, slots=True)
class MemoryLink:
    """An operator edge from one row to another, by the facts it was made between. ``live`` and
    ``other_live``: whether each end's fact holds its key now (a retired or deleted end keeps the
    edge; its Undo makes it live again)."""

    key: str
    fact_id: str
    other_key: str
    other_fact_id: str
    relation: str
    state: str  # linked | unlinked
    version: int
    changed_by: str
    changed_at: datetime
    live: bool = True
    other_live: bool = True


def category_change(current: CategoryLink | None, *, rescind: bool) -> str | None:
    """The state an ``assign_category`` appends, or None when the pair is already so (nothing to
    write). Rescinding a pair never assigned is refused: there is nothing to rescind."""
    wanted = RESCINDED if rescind else ASSIGNED
    if current is None and rescind:
        raise NotFound("nothing to rescind: the key does not carry that category", field="category")
    if current is not None and current.state == wanted:
        return None
    return wanted


def link_change(current: MemoryLink | None, *, unlink: bool) -> str | None:
    """The state a ``link`` appends, or None when the edge is already so."""
    wanted = UNLINKED if unlink else LINKED
    if current is None and unlink:
        raise NotFound("nothing to unlink: the two rows are not linked by that relation", field="other_key")
    if current is not None and current.state == wanted:
        return None
    return wanted


def never_stored(
    wanted: Mapping[str, Sequence[str]], stored: Iterable[tuple[str, str]], defined: Iterable[str]
) -> list[tuple[str, str]]:
    """The (key, category) pairs an import or an extraction adds: each pair it wants whose
    category the namespace defines and which was never stored, assigned or rescinded (a rescinded
    pair stays rescinded). In the order wanted, each pair once."""
    seen, names = set(stored), set(defined)
    out: list[tuple[str, str]] = []
    for key, categories in wanted.items():
        for category in categories:
            pair = (key, category)
            if category in names and pair not in seen:
                seen.add(pair)
                out.append(pair)
    return out


def item_categories(value: object, order: int) -> tuple[str, ...]:
    """An import item's ``categories``: a list of category names."""
    if not isinstance(value, (list, tuple)):
        raise InvalidInput(f"item {order}: categories must be a list of category names", entry=order)
    return tuple(dict.fromkeys(category_name(v, f"items[{order}].categories") for v in value))
