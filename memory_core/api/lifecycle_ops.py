"""The Memory tool's lifecycle ops (``MemoryTool`` lists each in its class body): delete and
restore, the flags (lock, pin, demote, reject), redaction, snapshots and rollback. Each is a new
version through the one commit; only ``redact`` edits a stored version."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..identity import Scope
from ..lifecycle.history import RollbackPlan
from ..model import Op, WriteResult
from ..services.lifecycle import LifecycleService


def delete(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
    """Tombstone the key: reads stop seeing it, history keeps it, ``restore`` brings it back."""
    return self._bound(LifecycleService).delete(key, scope=scope)


def delete_version(self, key: str, version: int, *, scope: str | Scope = Scope.USER) -> WriteResult:
    """Delete the key only while ``version`` (as read) is still its head; otherwise the verdict
    is ``version_changed`` and nothing is written."""
    return self._bound(LifecycleService).delete_version(key, version, scope=scope)


def restore(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
    """Undo the latest delete, reject, expiry or retirement of ``key``."""
    return self._bound(LifecycleService).restore(key, scope=scope)


def lock(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
    """Refuse every change of value (423) until unlocked."""
    return self._bound(LifecycleService).flag(key, scope=scope, kind=Op.LOCK)


def unlock(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
    return self._bound(LifecycleService).flag(key, scope=scope, kind=Op.UNLOCK)


def pin(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
    """Refuse a changed value (409) unless the write pins too, and refuse close peers of it."""
    return self._bound(LifecycleService).flag(key, scope=scope, kind=Op.PIN)


def unpin(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
    return self._bound(LifecycleService).flag(key, scope=scope, kind=Op.UNPIN)


def demote(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
    """Make an established fact a proposal again, with half its confidence and no expiry."""
    return self._bound(LifecycleService).flag(key, scope=scope, kind=Op.DEMOTE)


def reject(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
    """Mark the live fact wrong: hidden from reads, kept in history, undone by restore."""
    return self._bound(LifecycleService).flag(key, scope=scope, kind=Op.REJECT)


def redact(self, key: str, version_id: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
    """Scrub one historical version's value (and its copies) in place; never the live head."""
    return self._bound(LifecycleService).redact(key, version_id, scope=scope)


def snapshot(self, *, scope: str | Scope = Scope.USER) -> dict[str, Any]:
    """The scope's live facts as a portable payload (format, snapshot_id, rows, content_sha256);
    a home open for writing keeps a hash-only audit row of it."""
    return self._bound(LifecycleService).snapshot(scope=scope)


def restore_snapshot(self, payload: Any, *, scope: str | Scope = Scope.USER) -> WriteResult:
    """Write a snapshot's facts into this scope (once per snapshot_id: then ``already_restored``)."""
    return self._bound(LifecycleService).restore_snapshot(payload, scope=scope)


def rollback(self, to: datetime | str, *, scope: str | Scope = Scope.USER, apply: bool = False) -> RollbackPlan:
    """Put every key of the scope back to what the store held at ``to``: a new version per
    changed fact, keys absent then tombstoned. A dry run (the default) returns the plan only."""
    return self._bound(LifecycleService).rollback(to, scope=scope, apply=apply)
