"""The version log: the authoritative, append-only record of every version of every key, and
the values a write carries to it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, ContextManager, Protocol, Sequence

from ..audit import AuditEntry, AuditReport, AuditRow
from ..graph.plan import GraphWrite
from ..identity import Namespace
from ..model import FactVersion
from ..substrate.events import StateChange


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
    """Everything one write appends: its key changes, its audit rows, what it does to the graph,
    its state-change events and the substrate records it keeps (decided before the transaction,
    applied in it): all of it or none."""

    changes: tuple[KeyChange, ...]
    audits: tuple[AuditEntry, ...]
    graph: tuple[GraphWrite, ...] = ()
    events: tuple[StateChange, ...] = ()
    records: tuple[Any, ...] = ()  # ``ports.substrate.SubstrateRecord``s

    @property
    def rows(self) -> tuple[FactVersion, ...]:
        return tuple(r for c in self.changes for r in c.rows)


class StagedRows(Protocol):
    """New facts' first version rows given as columns rather than row objects (a batch's fresh
    entries). ``column(name)`` answers one column per ``FactVersion`` field (``provenance``:
    the Provenance objects; ``relations``, ``conflict_with``: tuples), ``count`` long."""

    count: int

    def column(self, name: str) -> Sequence[Any]: ...


class VersionLog(Protocol):
    """The authoritative, append-only log of every version of every key. The write path needs
    the point reads to be cheap: the embedded adapter answers them from a write-through cache."""

    read_only: bool

    @property
    def last_seq(self) -> int:
        """The global sequence number of the newest row (the index's watermark runs behind it)."""
        ...

    def locked(self) -> ContextManager[None]:
        """Hold the log for one read-decide-commit sequence (see ``session.commit``)."""
        ...

    def head(self, namespace: Namespace, key: str) -> Head | None: ...

    def has_key(self, namespace: Namespace, key: str) -> bool: ...

    def keys(self, namespace: Namespace) -> list[str]: ...

    def keys_under(self, namespace: Namespace, prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` keys of ``namespace`` that begin with ``prefix``, in order (a key stays
        listed once deleted: its facts' states say so)."""
        ...

    def fact_state(self, namespace: Namespace, key: str, fact_id: str) -> FactVersion | None: ...

    def fact_states(self, namespace: Namespace, key: str, known_at: datetime | None = None) -> list[FactVersion]:
        """The latest version row of every fact of ``key`` written at or before ``known_at``."""
        ...

    def history(self, namespace: Namespace, key: str) -> list[FactVersion]: ...

    def live_facts(self, namespace: Namespace, as_of: datetime, known_at: datetime | None = None) -> list[FactVersion]:
        """One row per key of ``namespace``: the fact live at ``as_of`` as believed at ``known_at``."""
        ...

    def session_notes(self, namespace: Namespace, session: str, limit: int) -> list[FactVersion]:
        """The first rows of the newest ``limit`` notes run session ``session`` said in
        ``namespace``, oldest first."""
        ...

    def states_known_at(self, namespace: Namespace, known_at: datetime) -> dict[str, list[FactVersion]]: ...

    def namespace_states(self, namespace: Namespace) -> dict[str, list[FactVersion]]: ...

    def latest_states(self, fact_ids: Sequence[str] | None = None) -> list[FactVersion]: ...

    def version_rows(self, ids: Sequence[str]) -> list[FactVersion]:
        """The version rows of these ids (an event's before and after)."""
        ...

    def rows_since(self, seq: int, until: int | None = None) -> list[str]: ...

    def expired_keys(self, now: datetime) -> dict[Namespace, list[str]]: ...

    def new_statements(self, after_seq: int, limit: int = 10_000) -> list[tuple[int, FactVersion]]:
        """(seq, row) of the first versions of facts appended after ``after_seq``."""
        ...

    def conflicted_namespaces(self) -> list[tuple[str, str, str]]:
        """Every (tenant, scope, owner) holding a conflicted fact now."""
        ...

    def snapshot_restored(self, snapshot_id: str, namespace: Namespace) -> bool: ...

    def apply(
        self,
        batch: WriteBatch,
        *,
        snapshot: tuple[str, int] | None = None,
        before_commit: Callable[[], None] | None = None,
        staged: StagedRows | None = None,
    ) -> None:
        """Append every change's rows (and ``staged``'s), apply the graph writes, chain the audit
        rows: all or nothing (``before_commit`` runs inside the transaction; if it raises,
        nothing is written)."""
        ...

    def remember(self, rows: Sequence[FactVersion]) -> None:
        """Rows ``staged`` into an applied batch, now as row objects, for the read cache."""
        ...

    def redact(
        self,
        rows: Sequence[FactVersion],
        value_json: str,
        content_sha256: str,
        audit: AuditEntry,
        requoted: Sequence[FactVersion] = (),
        events: Sequence[StateChange] = (),
    ) -> None:
        """Overwrite the value of the given version rows in place (the one edit the log allows),
        and forget the graph they stated; ``requoted``: rows of other notes whose index context
        quoted them, stored again with the context they are given; ``events``: the redaction's
        state changes; all in one transaction."""
        ...

    def notes_quoting(self, namespace: Namespace, note_id: str, session: str, text: str) -> list[FactVersion]:
        """The version rows of the notes run session ``session`` said after version row
        ``note_id`` whose index context holds ``text``."""
        ...

    def verify_audit(self) -> AuditReport: ...

    def audit_rows(self) -> list[AuditRow]: ...
