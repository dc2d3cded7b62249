"""Domain records. Frozen: a change is a new record, never an edit."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, Callable

from .errors import UnknownKind
from .graph.model import Relation
from .identity import Identity, Scope
from .temporal import iso


class Kind(str, Enum):
    FACT = "fact"
    NOTE = "note"
    DOCUMENT = "document"

    @classmethod
    def parse(cls, value: "str | Kind") -> "Kind":
        if isinstance(value, Kind):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            raise UnknownKind(f"unknown kind {value!r}; expected fact, note or document", kind=str(value)) from None


class Status(str, Enum):
    ACTIVE = "active"  # believed, and live over its valid interval
    SUPERSEDED = "superseded"  # closed by a later statement; still answers as_of inside its interval
    TOMBSTONED = "tombstoned"  # withdrawn by delete or expiry; hidden from reads until restored
    REJECTED = "rejected"  # judged wrong by its owner; hidden from reads until restored
    PROPOSED = "proposed"  # stated tentatively: served, but never overwrites an established fact
    CONFLICTED = "conflicted"  # served, and flagged against a peer it contradicts (conflict_with)


# Statuses whose fact still answers reads over its valid interval.
VISIBLE_STATUSES = (Status.ACTIVE.value, Status.SUPERSEDED.value, Status.PROPOSED.value, Status.CONFLICTED.value)
# Statuses of a fact that holds its key now: what a guard, a peer check or a lifecycle op acts on.
LIVE_STATUSES = (Status.ACTIVE.value, Status.PROPOSED.value, Status.CONFLICTED.value)
SOURCE_CLASSES = ("stated", "derived", "external", "imported")
CALLER_SOURCE_CLASSES = ("derived", "external", "imported")  # the downgrades a caller may ask for
SENSITIVITIES = ("low", "normal", "high")


def sensitivity_rank(value: str | None) -> int:
    """A sensitivity's place in ``SENSITIVITIES`` (an unknown one ranks as normal)."""
    return SENSITIVITIES.index(value) if value in SENSITIVITIES else 1


ON_EXPIRE = ("tombstone", "demote", "anonymize")


class Op(str, Enum):
    """What change wrote a version row."""

    SET = "set"  # a new statement
    RESTATE = "restate"  # the same value said again: reinforcement_count + 1
    SUPERSEDE = "supersede"  # an older fact closed (or retired) by a new statement
    DELETE = "delete"
    RESTORE = "restore"  # undo of the latest delete, reject, expiry or retirement
    LOCK = "lock"
    UNLOCK = "unlock"
    PIN = "pin"
    UNPIN = "unpin"
    PROMOTE = "promote"  # a proposal accepted as an established fact
    DEMOTE = "demote"  # an established fact made a proposal again, its confidence halved
    REJECT = "reject"
    FLAG = "flag"  # conflict marks set on a peer by another key's write
    EXPIRE = "expire"  # the expiry sweep applied on_expire
    ROLLBACK = "rollback"  # a key put back to the state it had at an earlier instant
    RELABEL = "relabel"  # the sensitivity sweep raised a stored tier to what detection says
    UPDATE = "update"  # a revision of a live fact's value that keeps its fact id (``update``)
    VERIFY = "verify"  # a reviewer affirmed the fact: provenance names who and when (``verify``)


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a version came from. Stamped by the store from the run identity, never by a caller."""

    tenant: str
    actor: str
    origin: str
    session: str | None = None
    run: str | None = None
    agent: str | None = None
    model: str | None = None
    source_quote: str | None = None
    source_turn: str | None = None  # the message the quote comes from
    source_span: tuple[int, int] | None = None  # [start, end) of the quote in that message
    compaction_generation: int | None = None  # which distillation boundary banked the span
    # A capture's envelope (``substrate``): the lens and frame it was made under, the actors that
    # relayed it (the caller last), and the author and source it names (claims, not identity).
    lens_id: str | None = None
    frame_id: str | None = None
    actor_chain: tuple[str, ...] = ()
    author: str | None = None
    source: str | None = None
    # A reviewer's affirmation of this value (``verify``): who and when. A revision clears them.
    judged_by: str | None = None
    judged_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "session": self.session,
            "run": self.run,
            "agent": self.agent,
            "model": self.model,
            "source_quote": self.source_quote,
            "origin": self.origin,
            "actor": self.actor,
            "source_turn": self.source_turn,
            "source_span": list(self.source_span) if self.source_span else None,
            "compaction_generation": self.compaction_generation,
            "lens_id": self.lens_id,
            "frame_id": self.frame_id,
            "actor_chain": list(self.actor_chain),
            "author": self.author,
            "source": self.source,
            "judged_by": self.judged_by,
            "judged_at": iso(self.judged_at),
        }

    @classmethod
    def of(cls, identity: Identity, origin: str, source_quote: str | None = None) -> "Provenance":
        """The provenance a run stamps on what it writes."""
        i = identity
        return cls(
            tenant=i.tenant,
            actor=i.actor,
            origin=origin,
            session=i.session,
            run=i.run,
            agent=i.agent,
            model=i.model,
            source_quote=source_quote,
        )


# A key's newest version number (0: none), as a write or the resolver numbers its next row.
HeadVersion = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class FactVersion:
    """One row of the append-only version log: the state of one fact after one change.

    ``fact_id`` names the statement (stable across its states); ``id`` names this row.
    ``superseded_by`` is the ``id`` of the version row that closed this fact.
    ``provenance`` says where the fact's value came from and stays with the fact across its states;
    ``changed_by`` names the actor whose change wrote this particular row (a correction, a delete).
    """

    id: str
    fact_id: str
    tenant: str
    scope: Scope
    owner_id: str
    key: str
    value_json: str
    content_sha256: str
    kind: Kind
    memory_type: str
    status: Status
    op: Op
    version: int
    change_id: str
    observed_at: datetime | None
    valid_at: datetime
    invalid_at: datetime | None
    created_at: datetime
    superseded_by: str | None
    reinforcement_count: int
    provenance: Provenance
    changed_by: str
    subject: str | None = None  # who the row is about or was said by (a speaker, an entity)
    index_context: str | None = None  # words that help find the row but are not its value
    source_class: str = "stated"  # stamped by the store; a caller may only downgrade it
    sensitivity: str = "normal"  # a high row is never embedded, indexed, or shown to a peer check
    expires_at: datetime | None = None
    on_expire: str = "tombstone"
    locked: bool = False  # a changed value or a retirement is refused (423)
    pinned: bool = False  # a changed value is refused (409) unless the write pins too
    confidence: float = 1.0
    conflict_with: tuple[str, ...] = ()  # fact ids of peers this fact is flagged against
    relations: tuple[Relation, ...] = ()  # the (subject, relation, object) triples the row states

    @property
    def live(self) -> bool:
        return self.status.value in LIVE_STATUSES

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now

    @property
    def value(self) -> Any:
        text = self.value_json
        if len(text) > 1 and text[0] == '"' and "\\" not in text:
            return text[1:-1]  # a plain string: canonical JSON added only the quotes
        return json.loads(text)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "fact_id": self.fact_id,
            "tenant": self.tenant,
            "scope": self.scope.value,
            "owner_id": self.owner_id,
            "key": self.key,
            "value": self.value,
            "content_sha256": self.content_sha256,
            "kind": self.kind.value,
            "memory_type": self.memory_type,
            "status": self.status.value,
            "op": self.op.value,
            "version": self.version,
            "change_id": self.change_id,
            "observed_at": iso(self.observed_at),
            "valid_at": iso(self.valid_at),
            "invalid_at": iso(self.invalid_at),
            "created_at": iso(self.created_at),
            "superseded_by": self.superseded_by,
            "reinforcement_count": self.reinforcement_count,
            "provenance": self.provenance.to_dict(),
            "changed_by": self.changed_by,
            "subject": self.subject,
            "index_context": self.index_context,
            "source_class": self.source_class,
            "sensitivity": self.sensitivity,
            "expires_at": iso(self.expires_at),
            "on_expire": self.on_expire,
            "locked": self.locked,
            "pinned": self.pinned,
            "confidence": self.confidence,
            "conflict_with": list(self.conflict_with),
            "relations": [r.to_json() for r in self.relations],
        }


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What a write did: its verdict, and every version row it appended, the principal row last.

    ``rows`` is empty when nothing was written (a dry run, a merge into a peer that needed no new
    row, a lifecycle op that found the key moved on). ``details`` carries what the verdict names:
    ``retyped_from``, ``merged_into``, ``peers``, ``threshold``, ``dry_run``, ...
    """

    verdict: str
    key: str
    rows: tuple[FactVersion, ...]
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def version(self) -> FactVersion | None:
        own = [r for r in self.rows if r.key == self.key]
        return own[-1] if own else None

    @property
    def closed(self) -> tuple[FactVersion, ...]:
        return tuple(r for r in self.rows if r.op is Op.SUPERSEDE)

    def to_dict(self) -> dict[str, Any]:
        version = self.version
        return {
            "verdict": self.verdict,
            "key": self.key,
            "version": version.to_dict() if version else None,
            "closed": [c.to_dict() for c in self.closed],
            "rows_written": len(self.rows),
            **self.details,
        }
