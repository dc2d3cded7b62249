"""The options of a write (``set``, a bulk entry, an import item), as one typed value.

``SetOptions.parse`` is the only way from what a caller named to the options a request holds:
an unknown name is refused by name (``UNKNOWN_OPTION``, listing the known ones), never passed on
to fail later as a ``TypeError``; every value is checked strictly (``memory_core.inputs``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping

from ..errors import InvalidInput, UnknownKind
from ..graph.model import Relation, parse_relations
from ..inputs import flag, integer, known_options, number, text
from ..model import ON_EXPIRE, Kind, Provenance
from ..temporal import parse_instant

# A ttl beyond a century is a mistake, and keeps now + ttl inside the calendar.
MAX_TTL_SECONDS = 100 * 365 * 24 * 3600
MAX_SOURCE_OFFSET = 2**31


@dataclass(frozen=True, slots=True)
class SetOptions:
    """Every option of a write, checked. Defaults are what ``set`` does when it is not told."""

    kind: Kind = Kind.FACT
    memory_type: str = "general"
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    observed_at: datetime | None = None
    subject: str | None = None
    subject_type: str | None = None
    relations: tuple[Relation, ...] = ()
    context: str | None = None
    ttl_seconds: float | None = None
    on_expire: str | None = None
    pin: bool = False
    proposed: bool = False
    if_match_sha256: str | None = None
    sensitivity: str | None = None
    source_class: str | None = None
    confidence: float | None = None
    source_quote: str | None = None
    source_turn: str | None = None
    source_span: tuple[int, int] | None = None
    compaction_generation: int | None = None

    @classmethod
    def parse(cls, given: Mapping[str, Any], where: str = "set") -> SetOptions:
        """The options named in ``given`` (any not named keep their defaults)."""
        if not given:
            return DEFAULT_OPTIONS
        known_options(given, OPTION_NAMES, where)
        g = given.get
        if_match = text(g("if_match_sha256"), "if_match_sha256", optional=True)
        if if_match is not None and len(if_match) != 64:
            raise InvalidInput("if_match_sha256 must be a 64-character hex digest", field="if_match_sha256")
        on_expire = g("on_expire")
        if on_expire is not None and (not isinstance(on_expire, str) or on_expire not in ON_EXPIRE):
            raise InvalidInput(f"on_expire must be one of {', '.join(ON_EXPIRE)}", field="on_expire")
        kind = g("kind", Kind.FACT)
        if not isinstance(kind, str):  # a Kind is a str
            raise UnknownKind("kind must be fact, note or document", field="kind")
        subject = _optional(g("subject"), "subject")
        return cls(
            kind=Kind.parse(kind),
            memory_type=_memory_type(g("memory_type", "general")),
            valid_at=parse_instant(g("valid_at"), "valid_at"),
            invalid_at=parse_instant(g("invalid_at"), "invalid_at"),
            observed_at=parse_instant(g("observed_at"), "observed_at"),
            subject=subject,
            subject_type=_optional(g("subject_type"), "subject_type"),
            relations=_relations(g("relations"), subject, g("subject_type")),
            context=_optional(g("context"), "context"),
            ttl_seconds=number(g("ttl_seconds"), "ttl_seconds", low=0, high=MAX_TTL_SECONDS, optional=True),
            on_expire=on_expire,
            pin=flag(g("pin", False), "pin"),
            proposed=flag(g("proposed", False), "proposed"),
            if_match_sha256=if_match,
            sensitivity=text(g("sensitivity"), "sensitivity", optional=True, blank=True),
            source_class=text(g("source_class"), "source_class", optional=True, blank=True),
            confidence=number(g("confidence"), "confidence", low=0, high=1, optional=True),
            source_quote=_optional(g("source_quote"), "source_quote"),
            source_turn=_optional(g("source_turn"), "source_turn"),
            source_span=_span(g("source_span")),
            compaction_generation=integer(
                g("compaction_generation"), "compaction_generation", low=0, high=2**31, optional=True
            ),
        )

    def provenance(self, base: Provenance) -> Provenance:
        """Where in a transcript the value was read: the quote, its message, its span, the boundary."""
        if (self.source_quote, self.source_turn, self.source_span, self.compaction_generation) == (None,) * 4:
            return base
        return dataclasses.replace(
            base,
            source_quote=self.source_quote or base.source_quote,
            source_turn=self.source_turn,
            source_span=self.source_span,
            compaction_generation=self.compaction_generation,
        )


OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(SetOptions))
DEFAULT_OPTIONS = SetOptions()


def _optional(value: Any, field: str) -> str | None:
    """Optional text, stripped: a blank string is refused, not taken for "not given"."""
    found = text(value, field, optional=True)
    return None if found is None else found.strip()


def _memory_type(value: Any) -> str:
    return text(value, "memory_type", max_chars=200).strip()


def _span(span: Any) -> tuple[int, int] | None:
    if span is None:
        return None
    if (
        not isinstance(span, (list, tuple))
        or len(span) != 2
        or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i <= MAX_SOURCE_OFFSET for i in span)
        or span[0] > span[1]
    ):
        raise InvalidInput("source_span must be [start, end] character offsets", field="source_span")
    return (span[0], span[1])


def _relations(raw: Any, subject: str | None, subject_type: Any) -> tuple[Relation, ...]:
    """The graph facts a write names; ones built by the tool itself (document chunks) pass as they are."""
    if isinstance(raw, tuple) and raw and all(isinstance(r, Relation) for r in raw):
        return raw
    return parse_relations(raw, subject_type=_optional(subject_type, "subject_type"), default_subject=subject)
