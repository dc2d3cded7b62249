"""The entity graph's values: the relations a row states, and the stored triple observations.

A row (a fact, or an entity chunk of a document) states up to ``MAX_RELATIONS`` relations
``(subject, relation, object)``. The graph keeps one *observation* per stated triple: when it
starts (its own ``valid_at``, or when it was seen), the end it stated (``invalid_at``), and the
end the graph gave it (``ended_at``: a newer value of a single-valued relation, or the row that
stated it retired). Links tie each observation to the rows (fact id and content hash) that state it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Mapping, Sequence

from ..errors import InvalidInput
from ..temporal import END_OF_TIME, check_interval, parse_instant

MAX_RELATIONS = 8
MAX_NAME = 200
# "I live in Paris" is (user, lives_in, paris): the first person is the profile's owner.
OWNER_ENTITY = "user"
_FIRST_PERSON = {"i", "me", "myself", "user", "the user"}

# Why a triple ended. ``newer_value``: a newer value of its single-valued relation started;
# ``retired``: the rows that stated it were superseded, deleted, rejected or expired.
NEWER_VALUE, RETIRED = "newer_value", "retired"
# Where an observation came from: a row stating it, an Undo re-stating it, the one-value-current
# fallback, or an entity chunk of a document.
STATED, RESTORE, FALLBACK, DOCUMENT = "stated", "restore", "fallback", "document"
DOCUMENTED_IN = "documented_in"


def entity_id(name: str) -> str:
    """The identity of an entity: its name case-folded with whitespace collapsed."""
    folded = " ".join(name.split()).casefold()
    return OWNER_ENTITY if folded in _FIRST_PERSON else folded


def relation_name(name: str) -> str:
    return "_".join(name.split()).casefold()


@dataclass(frozen=True, slots=True)
class Relation:
    """One relation a row states. Names are stored canonical (``entity_id`` / ``relation_name``)."""

    subject: str
    relation: str
    object: str
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    subject_type: str | None = None
    object_type: str | None = None
    fact_class: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"subject": self.subject, "relation": self.relation, "object": self.object}
        for name in ("valid_at", "invalid_at"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value.isoformat()
        for name in ("subject_type", "object_type", "fact_class"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Relation":
        return cls(
            body["subject"],
            body["relation"],
            body["object"],
            parse_instant(body.get("valid_at"), "valid_at"),  # homes before v5 are migrated on open
            parse_instant(body.get("invalid_at"), "invalid_at"),
            body.get("subject_type"),
            body.get("object_type"),
            body.get("fact_class"),
        )

    @property
    def triple(self) -> tuple[str, str, str]:
        return self.subject, self.relation, self.object


def _name(value: Any, field: str, index: int, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME or any(ord(c) < 32 for c in value):
        raise InvalidInput(
            f"relation {index}: {field} must be a non-empty string of at most {MAX_NAME} "
            "characters without control characters",
            field=f"relations[{index}].{field}",
        )
    return value


def parse_relations(
    raw: Any, *, subject_type: str | None = None, default_subject: str | None = None
) -> tuple[Relation, ...]:
    """Validate what a caller names: a list of {subject, relation, object, valid_at?, invalid_at?,
    subject_type?, object_type?} objects or [subject, relation, object] triples (at most eight).
    ``subject_type`` types a relation whose subject is ``default_subject``."""
    if raw is None:
        return ()
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Sequence):
        raise InvalidInput("relations must be a list of {subject, relation, object} objects", field="relations")
    if len(raw) > MAX_RELATIONS:
        raise InvalidInput(f"a write names at most {MAX_RELATIONS} relations, got {len(raw)}", field="relations")
    out: list[Relation] = []
    for i, item in enumerate(raw):
        if isinstance(item, Mapping):
            unknown = set(item) - {
                "subject",
                "relation",
                "object",
                "valid_at",
                "invalid_at",
                "valid_from",
                "valid_to",
                "subject_type",
                "object_type",
            }
            if unknown:
                raise InvalidInput(
                    f"relation {i}: unknown field(s) {', '.join(sorted(unknown))}", field=f"relations[{i}]"
                )
            body = dict(item)
        elif isinstance(item, Sequence) and not isinstance(item, (str, bytes)) and len(item) == 3:
            body = dict(zip(("subject", "relation", "object"), item))
        else:
            raise InvalidInput(
                f"relation {i}: expected an object or a [subject, relation, object] triple", field=f"relations[{i}]"
            )
        subject = entity_id(_name(body.get("subject"), "subject", i))
        for new, old in (("valid_at", "valid_from"), ("invalid_at", "valid_to")):
            if old in body:  # the names before the graph took the facts' time names
                if new in body:
                    raise InvalidInput(f"relation {i}: {new} and {old} name the same instant", field=f"relations[{i}]")
                body[new] = body.pop(old)
        start = parse_instant(body.get("valid_at"), "valid_at")
        end = parse_instant(body.get("invalid_at"), "invalid_at")
        if start is not None:
            check_interval(start, end)
        s_type = _name(body.get("subject_type"), "subject_type", i, optional=True)
        if s_type is None and subject_type and default_subject and subject == entity_id(default_subject):
            s_type = subject_type
        out.append(
            Relation(
                subject,
                relation_name(_name(body.get("relation"), "relation", i)),
                entity_id(_name(body.get("object"), "object", i)),
                start,
                end,
                s_type.strip().casefold() if s_type else None,
                (_name(body.get("object_type"), "object_type", i, optional=True) or "").strip().casefold() or None,
            )
        )
    if len({r.triple for r in out}) != len(out):
        raise InvalidInput("a write names the same (subject, relation, object) twice", field="relations")
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Observation:
    """One stored observation of a triple."""

    triple_id: str
    subject: str
    relation: str
    object: str
    valid_at: datetime  # its own valid_at, or when it was seen
    dated: bool  # did the statement carry its own valid_at?
    invalid_at: datetime | None  # the end it stated ("London until December")
    seen_at: datetime  # the arrival of the write that stored it, + 1 µs per triple before it
    ended_at: datetime | None = None
    end_reason: str | None = None
    origin: str = STATED
    restore_id: str | None = None
    fact_class: str | None = None

    @property
    def order_key(self) -> tuple[date, datetime, str]:
        """The one total order of a relation's values: (valid_at day, seen_at, object)."""
        return self.valid_at.date(), self.seen_at, self.object

    @property
    def end(self) -> datetime:
        ends = [e for e in (self.invalid_at, self.ended_at) if e is not None]
        return min(ends) if ends else END_OF_TIME

    def current_at(self, when: datetime) -> bool:
        return self.valid_at <= when < self.end

    @property
    def open_ended(self) -> bool:
        return self.invalid_at is None
