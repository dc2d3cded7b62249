"""An erasure holds its scope: while it is queued, running or failed, no write lands there (a fact
written mid-saga would escape the census, or be erased without its writer knowing)."""

from __future__ import annotations

from typing import Iterable

from ..errors import ErasureUnderWay
from ..identity import Namespace
from ..ports import Store


def held(store: Store, namespace: Namespace) -> bool:
    """Whether an erasure holds ``namespace`` now."""
    return any(target.covers(namespace) for target in store.erasure.holds())


def refuse_held(store: Store, namespaces: Iterable[Namespace]) -> None:
    """Raise ``ErasureUnderWay`` when an erasure holds any of these namespaces."""
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
