"""Categories and links (docs/write-path.md, "Categories and links"): a namespace's category
taxonomy (``category_define``, ``categories``), which rows carry which category
(``assign_category``, by key, so a revision of the row keeps them), and operator edges between two
rows (``link``, ``links``, by the facts they were made between, so a retirement or a delete keeps
the edge and its Undo makes it live again).

Every change is one audited append under the store's lock; the same change twice writes nothing.
Imports and extractions add category links through ``session.categories.add_new_category_links``:
only pairs never stored, so a link the owner rescinded stays rescinded.
"""

from __future__ import annotations

from typing import Sequence

from ..audit import audit_entry
from ..errors import InvalidInput, NotFound
from ..identity import Namespace, Scope
from ..model import LIVE_STATUSES, FactVersion
from ..session import RunService
from ..session.categories import defined_categories, refuse_unknown
from ..session.holds import refuse_held
from ..session.reads import fact_at_time
from ..values import content_sha256
from ..write.categories import (
    LINKED,
    Category,
    CategoryLink,
    MemoryLink,
    category_change,
    category_name,
    description_text,
    link_change,
)
from ..write.settle import validate_key


class CategoryService(RunService):
    def _writing(self, what: str, namespace: Namespace) -> None:
        self.session.refuse_read_only(what)
        refuse_held(self.session.store, [namespace])

    def _live(self, namespace: Namespace, key: str) -> FactVersion:
        """The row ``key`` holds now, or ``NotFound`` (a key of another scope or tenant is missing
        here too: one read touches one namespace)."""
        found = fact_at_time(self.session, namespace, key, None, None)
        if found is None:
            raise NotFound(f"no live row at key {key!r} in scope {namespace.scope.value}", key=key)
        return found

    # -- the taxonomy ----------------------------------------------------------------------------

    def define(self, name: str, description: str | None, scope: str | Scope) -> Category:
        name, description = category_name(name, "name"), description_text(description)
        namespace = self.identity.namespace(scope)
        session = self.session
        store = session.store.categories
        with session.locked():
            current = {c.name: c for c in store.categories(namespace)}.get(name)
            if current is not None and current.description == description:
                return current  # the same definition again writes nothing
            self._writing("category_define", namespace)
            now, actor = session.clock.now(), self.identity.actor
            digest = content_sha256(f"{name}\n{description or ''}")
            audit = audit_entry(namespace, f"category:{name}", "category_define", (), digest, actor, now)
            return store.define(namespace, Category(name, description, 0, actor, now), audit)

    def categories(self, scope: str | Scope, key: str | None) -> list[Category]:
        namespace = self.identity.namespace(scope)
        taxonomy = defined_categories(self.session, namespace)
        if key is None:
            return taxonomy
        key = validate_key(key)
        if fact_at_time(self.session, namespace, key, None, None) is None:
            return []  # a key with no live row carries nothing now (its links wait for its Undo)
        carried = {c.category for c in self.session.store.categories.category_links(namespace, [key]) if c.assigned}
        return [c for c in taxonomy if c.name in carried]

    def assign(self, key: str, category: str, scope: str | Scope, rescind: bool) -> CategoryLink:
        key, category = validate_key(key), category_name(category)
        namespace = self.identity.namespace(scope)
        session = self.session
        store = session.store.categories
        with session.locked():
            refuse_unknown(session, namespace, [category])
            if not rescind:
                self._live(namespace, key)
            current = next((c for c in store.category_links(namespace, [key]) if c.category == category), None)
            state = category_change(current, rescind=rescind)
            if state is None:
                assert current is not None  # category_change answers None only for a stored pair
                return current
            self._writing("assign_category", namespace)
            now, actor = session.clock.now(), self.identity.actor
            link = CategoryLink(key, category, state, 0, "assign", actor, now)
            audit = audit_entry(
                namespace, key, "assign_category", (), content_sha256(f"{category}\n{state}"), actor, now
            )
            store.put_category_links(namespace, [link], audit)
            stored = next(c for c in store.category_links(namespace, [key]) if c.category == category)
        return stored

    # -- operator links --------------------------------------------------------------------------

    def _fact_ids(self, namespace: Namespace, key: str) -> dict[str, FactVersion]:
        """Each fact ``key`` ever held, by id, as it stands now."""
        return {f.fact_id: f for f in self.session.versions.fact_states(namespace, key)}

    def link(self, key: str, other_key: str, relation: str, scope: str | Scope, unlink: bool) -> list[MemoryLink]:
        key, other_key = validate_key(key), validate_key(other_key)
        relation = category_name(relation, "relation")
        if key == other_key:
            raise InvalidInput("a row is not linked to itself: other_key must name another key", field="other_key")
        namespace = self.identity.namespace(scope)
        session = self.session
        store = session.store.categories
        with session.locked():
            if unlink:
                ours, theirs = self._fact_ids(namespace, key), self._fact_ids(namespace, other_key)
                edges = [
                    e
                    for e in store.links(namespace, list(ours))
                    if e.relation == relation
                    and e.state == LINKED
                    and {e.fact_id, e.other_fact_id} <= set(ours) | set(theirs)
                    and not {e.fact_id, e.other_fact_id} <= set(ours)
                ]
                if not edges:
                    link_change(None, unlink=True)  # refuses: nothing to unlink
                changed = edges
            else:
                one, other = self._live(namespace, key), self._live(namespace, other_key)
                current = next(
                    (
                        e
                        for e in store.links(namespace, [one.fact_id])
                        if (e.fact_id, e.other_fact_id, e.relation) == (one.fact_id, other.fact_id, relation)
                    ),
                    None,
                )
                if current is not None and link_change(current, unlink=False) is None:
                    return self._shown(namespace, [current])  # linked already: nothing written
                changed = [
                    MemoryLink(key, one.fact_id, other_key, other.fact_id, relation, LINKED, 0, "", one.created_at)
                ]
            self._writing("link", namespace)
            now, actor = session.clock.now(), self.identity.actor
            state = "unlinked" if unlink else LINKED
            stored = [
                MemoryLink(e.key, e.fact_id, e.other_key, e.other_fact_id, relation, state, 0, actor, now)
                for e in changed
            ]
            digest = content_sha256("\n".join(f"{e.fact_id}\t{e.other_fact_id}\t{relation}\t{state}" for e in stored))
            store.put_links(namespace, stored, audit_entry(namespace, key, "link", (), digest, actor, now))
            edges = {(e.fact_id, e.other_fact_id, relation) for e in changed}
            found = store.links(namespace, [e.fact_id for e in changed])
            return self._shown(namespace, [e for e in found if (e.fact_id, e.other_fact_id, e.relation) in edges])

    def links(self, key: str, scope: str | Scope) -> list[MemoryLink]:
        key = validate_key(key)
        namespace = self.identity.namespace(scope)
        facts = self._fact_ids(namespace, key)
        edges = [e for e in self.session.store.categories.links(namespace, list(facts)) if e.state == LINKED]
        return self._shown(namespace, edges)

    def _shown(self, namespace: Namespace, edges: Sequence[MemoryLink]) -> list[MemoryLink]:
        """The edges with whether each end's fact holds its key now."""
        now = self.session.clock.now()
        states: dict[str, dict[str, FactVersion]] = {}

        def live(key: str, fact_id: str) -> bool:
            if key not in states:
                states[key] = self._fact_ids(namespace, key)
            fact = states[key].get(fact_id)
            return fact is not None and fact.status.value in LIVE_STATUSES and not fact.expired(now)

        return [
            MemoryLink(
                e.key,
                e.fact_id,
                e.other_key,
                e.other_fact_id,
                e.relation,
                e.state,
                e.version,
                e.changed_by,
                e.changed_at,
                live(e.key, e.fact_id),
                live(e.other_key, e.other_fact_id),
            )
            for e in edges
        ]
