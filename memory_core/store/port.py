"""The authoritative store's port: what the Memory tool needs, and nothing engine-specific."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, ContextManager, Protocol, Sequence

from ..audit import AuditEntry, AuditReport
from ..identity import Namespace
from ..model import FactVersion


@dataclass(frozen=True, slots=True)
class Head:
    """The newest version row of one key: its number, its status and when it was written."""

    namespace: Namespace
    key: str
    version: int
    status: str
    head_version_id: str
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class KeyChange:
    """The version rows one write appends to one key."""

    namespace: Namespace
    key: str
    rows: tuple[FactVersion, ...]


@dataclass(frozen=True, slots=True)
class WriteBatch:
    """Everything one write appends (its key changes and its audit rows): all of it or none."""

    changes: tuple[KeyChange, ...]
    audits: tuple[AuditEntry, ...]

    @property
    def rows(self) -> tuple[FactVersion, ...]:
        return tuple(r for c in self.changes for r in c.rows)


class StagedRows(Protocol):
    """New version rows given as columns rather than as row objects (a batch's fresh entries):
    ``table`` answers them in the staged layout of the store's bulk insert, numbered from
    ``first_seq`` and naming the audit row ``audit_seq``."""

    count: int

    def table(self, first_seq: int, audit_seq: int | None) -> Any: ...


class VersionStore(Protocol):
    """The authoritative store. The write path needs the point reads below to be cheap: the
    embedded adapter answers them from a write-through cache (it is the home's only writer)."""

    read_only: bool

    def head(self, namespace: Namespace, key: str) -> Head | None: ...

    def has_key(self, namespace: Namespace, key: str) -> bool: ...

    def fact_state(self, namespace: Namespace, key: str, fact_id: str) -> FactVersion | None: ...

    def locked(self) -> ContextManager[None]:
        """Hold the store for one read-decide-apply sequence."""
        ...

    def fact_states(self, namespace: Namespace, key: str, known_at: datetime | None = None) -> list[FactVersion]:
        """The latest version row of every fact of ``key`` written at or before ``known_at``."""
        ...

    def history(self, namespace: Namespace, key: str) -> list[FactVersion]: ...

    def live_facts(self, namespace: Namespace, as_of: datetime, known_at: datetime | None = None) -> list[FactVersion]:
        """One row per key of ``namespace``: the fact live at ``as_of`` as believed at ``known_at``."""
        ...

    def apply(
        self,
        batch: WriteBatch,
        *,
        snapshot: tuple[str, int] | None = None,
        before_commit: Callable[[], None] | None = None,
        staged: StagedRows | None = None,
    ) -> None:
        """Append every change's rows (and ``staged``'s) and chain the audit rows: all or nothing
        (``before_commit`` runs inside the transaction; if it raises, nothing is written)."""
        ...

    def remember(self, rows: Sequence[FactVersion]) -> None:
        """Rows ``staged`` into an applied batch, now as row objects, for the read cache."""
        ...

    def verify_audit(self) -> AuditReport: ...

    def close(self) -> None: ...
