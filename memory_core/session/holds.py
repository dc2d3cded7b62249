"""An erasure holds its scope: while it is queued, running or failed, no write lands there (a fact
written mid-saga would escape the census, or be erased without its writer knowing). A namespace
``namespace_delete`` soft-deleted is held the same way until ``namespace_register`` brings it
back: workers skip it and a write there is refused (``NamespaceDeleted``), never lost silently."""

from __future__ import annotations

from typing import Iterable

from ..errors import ErasureUnderWay
from ..identity import Namespace
from ..lifecycle.namespaces import NamespaceDeleted
from ..ports import Store


def soft_deleted(store: Store, namespace: Namespace) -> bool:
    """Whether ``namespace_delete`` hid the namespace: every read plane answers it as empty."""
    return namespace in store.namespaces.deleted()


def held(store: Store, namespace: Namespace) -> bool:
    """Whether an erasure holds ``namespace`` now, or it is soft-deleted."""
    return soft_deleted(store, namespace) or any(target.covers(namespace) for target in store.erasure.holds())


def refuse_held(store: Store, namespaces: Iterable[Namespace]) -> None:
    """Raise ``ErasureUnderWay`` when an erasure holds any of these namespaces, and
    ``NamespaceDeleted`` when one is soft-deleted."""
    deleted = store.namespaces.deleted()
    if deleted:
        namespaces = list(namespaces)
        refuse_deleted(deleted, namespaces)
    holds = store.erasure.holds()
    if not holds:
        return
    for ns in set(namespaces):
        for target in holds:
            if target.covers(ns):
                raise ErasureUnderWay(
                    f"an erasure of {target.describe()} is under way: nothing is written in "
                    f"{ns.scope.value} {ns.owner_id} until it has finished",
                    tenant=ns.tenant,
                    scope=ns.scope.value,
                )


def refuse_deleted(deleted: frozenset[Namespace], namespaces: Iterable[Namespace]) -> None:
    for ns in namespaces:
        if ns in deleted:
            raise NamespaceDeleted(
                f"the {ns.scope.value} namespace {ns.owner_id} was deleted: namespace_register brings it back "
                "before anything is written there",
                scope=ns.scope.value,
            )
