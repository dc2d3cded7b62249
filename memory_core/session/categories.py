"""Category links an import or an extraction adds beside its write, and the taxonomy reads they
check against (``services.categories`` keeps the ops; docs/write-path.md, "Categories and
links"). Here, in the session, so the writes and the extraction services share them without
calling one another."""

from __future__ import annotations

from typing import Mapping, Sequence

from ..audit import audit_entry
from ..identity import Namespace
from ..values import content_sha256
from ..write.categories import ASSIGNED, Category, CategoryLink, CategoryNotFound, never_stored
from .core import Session
from .holds import refuse_held
from .reads import fact_at_time


def defined_categories(session: Session, namespace: Namespace) -> list[Category]:
    """The namespace's taxonomy (what ``fetch_namespace_categories`` shows an extraction)."""
    return session.store.categories.categories(namespace)


def refuse_unknown(session: Session, namespace: Namespace, names: Sequence[str]) -> None:
    """``CategoryNotFound`` for the first name the namespace does not define (nothing written)."""
    defined = {c.name for c in defined_categories(session, namespace)}
    for name in names:
        if name not in defined:
            raise CategoryNotFound(
                f"scope {namespace.scope.value} defines no category {name!r} (category_define first)",
                category=name,
            )


def add_new_category_links(
    session: Session, namespace: Namespace, wanted: Mapping[str, Sequence[str]], actor: str, origin: str
) -> list[tuple[str, str]]:
    """Assign each wanted (key, category) pair never stored, of a key that holds a live row now and
    a category the namespace defines: one audited append. A pair the owner rescinded (or assigned)
    before is left as it is. Answers the pairs added."""
    if not wanted:
        return []
    store = session.store.categories
    with session.locked():
        now = session.clock.now()
        live = {k: v for k, v in wanted.items() if fact_at_time(session, namespace, k, None, None) is not None}
        stored = [(c.key, c.category) for c in store.category_links(namespace, list(live))]
        pairs = never_stored(live, stored, (c.name for c in store.categories(namespace)))
        if not pairs:
            return []
        refuse_held(session.store, [namespace])
        links = [CategoryLink(k, c, ASSIGNED, 0, origin, actor, now) for k, c in pairs]
        digest = content_sha256("\n".join(f"{k}\t{c}" for k, c in pairs))
        audit = audit_entry(namespace, "*", f"{origin}_categories", (), digest, actor, now)
        store.put_category_links(namespace, links, audit)
    return pairs
