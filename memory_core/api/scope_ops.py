"""The Memory tool's scope-wide ops (``MemoryTool`` lists each in its class body): clear a scope
and undo it, delete a namespace and register it again, promote a fact into a shared scope, and
decide a proposal. ``docs/write-path.md`` ("Scope-wide ops") says what each does."""

from __future__ import annotations

from typing import Any

from ..identity import Scope
from ..model import WriteResult
from ..services.scopes import ScopesService


def clear(self, *, scope: str | Scope = Scope.USER, dry_run: bool = False) -> WriteResult:
    """Tombstone every live row of the scope except the locked ones, as one operation: every
    tombstone carries one change id (``details["change_id"]``), which ``clear_undo`` takes.
    ``details`` lists the keys ``cleared`` and those ``kept_locked``; ``dry_run`` writes nothing."""
    return self._bound(ScopesService).clear(scope=scope, dry_run=dry_run)


def clear_undo(self, change_id: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
    """Undo a clear: each row it tombstoned comes back as it was, unless its key changed since
    (``details["changed_since"]`` lists those, left as they are). An unknown change id is missing."""
    return self._bound(ScopesService).clear_undo(change_id, scope=scope)


def namespace_delete(self, *, scope: str | Scope = Scope.USER) -> dict[str, Any]:
    """Soft-delete the scope's namespace: reads answer as empty, workers skip it, a write there is
    refused (``NAMESPACE_DELETED``); nothing is destroyed. Your own user or agent namespace; the
    tenant's needs an admin run."""
    return self._bound(ScopesService).namespace_delete(scope=scope)


def namespace_register(self, *, scope: str | Scope = Scope.USER) -> dict[str, Any]:
    """Bring a deleted namespace back with everything as it was (``changed`` is False when it
    was not deleted)."""
    return self._bound(ScopesService).namespace_register(scope=scope)


def promote(self, key: str, *, scope: str | Scope = Scope.USER, to_scope: str | Scope = Scope.TENANT) -> WriteResult:
    """Copy the key's live fact into ``to_scope`` (a shared scope this run may write) through the
    write path, with lineage back to its source (``lineage(key, scope=to_scope)``: ``promoted_from``).
    The source stays as it is; a proposal is decided first (``proposal_decide``)."""
    return self._bound(ScopesService).promote(key, scope=scope, to_scope=to_scope)


def proposal_decide(self, key: str, *, accept: bool = True, scope: str | Scope = Scope.USER) -> WriteResult:
    """Decide the key's proposal: accept it as an established fact, or reject it (hidden from
    reads, kept in history, undone by ``restore``). Only a proposal is decided."""
    return self._bound(ScopesService).proposal_decide(key, scope=scope, accept=accept)
