"""Reduce: which rows of the state-change stream are raw inputs, and the atomic claims each says.

An input is a capture (a fact written through a lens), a transcript (an extraction's verbatim
window, or a note a run session said) or a decision trace (its rationale, and its outcome once
known). A capture or a decision gives one claim per sentence; a transcript gives what the rule
extractor reads in it (``extraction.rules``: first-person statements, one claim each), so an
offline run never invents a statement. Rows the pipeline wrote itself, evidence notes (a copy of
the windows' turns) and workers' own traces are never inputs.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Sequence

from ..extraction.model import Turn, slug
from ..extraction.rules import RuleExtractor
from ..lifecycle.history import REDACTED_JSON
from ..model import FactVersion, Kind, Op
from ..substrate.decisions import DecisionTrace
from ..substrate.events import StateChange
from ..substrate.refs import ref
from ..texts import value_text
from ..write.templates import canonical_form
from .model import CAPTURE, DECISION, REFLECT_ACTOR, REFLECT_ORIGIN, TAG, TRANSCRIPT, Claim, Source

# The events that may carry an input: a new statement, or a decision trace's new version.
INPUT_EVENTS = ("fact.created", "fact.superseded", "batch.written", "decision.recorded")
SKIPPED_NOTES = frozenset({"evidence"})  # extraction's per-turn copies of what its windows hold
CHUNK_TYPE = "transcript_chunk"
DECISION_CLAIM_TYPE = "lesson"
TRANSCRIPT_CLAIM_TYPE = "general"

# A sentence ends at . ! or ? before a capital, a digit or a quote ("release 4.2 shipped" and
# "e.g. this" stay whole); a line break always ends one.
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_BULLET = re.compile(r"^(?:[-*\u2022]+|\d+[.)])\s+")
_SPEAKER = re.compile(r"^(?P<who>[^:\n]{1,60}):\s(?P<said>.*)$")
_ROLES = {"assistant", "system", "tool", "memory"}


def own_event(event: StateChange) -> bool:
    """Did the pipeline write this (its writes and its retirements)?"""
    return event.actor == REFLECT_ACTOR or any(e.startswith(TAG) for e in event.evidence)


def sentences(text: str) -> list[str]:
    """The statements of a text: its sentences, bullets stripped, questions left out."""
    out = []
    for line in text.splitlines():
        for part in _SPLIT.split(_BULLET.sub("", line.strip())):
            said = part.strip()
            if said and not said.endswith("?"):
                out.append(said)
    return out


def row_source(row: FactVersion, seq: int) -> Source | None:
    """The input a new row is, if it is one (a row must still be served: the caller passes the
    fact's current state)."""
    provenance = row.provenance
    if provenance.origin == REFLECT_ORIGIN or (provenance.source or "").startswith(TAG):
        return None  # the pipeline's own output is never read back in
    if row.sensitivity == "high" or row.value_json == REDACTED_JSON or not row.live:
        return None
    text = value_text(row.value)
    observed = row.observed_at or row.valid_at
    base = dict(
        ref=ref(row.kind.value, row.fact_id),
        tenant=row.tenant,
        scope=row.scope.value,
        owner_id=row.owner_id,
        seq=seq,
        fact_id=row.fact_id,
        key=row.key,
        text=text,
        subject=row.subject,
        observed_at=observed,
    )
    if row.kind is Kind.FACT and provenance.lens_id is not None:
        return Source(kind=CAPTURE, memory_type=row.memory_type, holds_statement=True, **base)
    if row.kind is Kind.NOTE and row.memory_type not in SKIPPED_NOTES:
        window = row.memory_type == CHUNK_TYPE
        if window or provenance.session is not None:
            return Source(kind=TRANSCRIPT, memory_type=TRANSCRIPT_CLAIM_TYPE, window=window, **base)
    return None


def new_statements(rows: Sequence[FactVersion]) -> list[FactVersion]:
    """The rows of an event that state something new (not a closing row, a flag or a restatement)."""
    return [r for r in rows if r.op is Op.SET]


def decision_source(trace: DecisionTrace, version: int, seq: int) -> Source | None:
    """What a decision trace's ``version`` adds: the rationale with its first version, the outcome
    with the newest version that carries it (``trace`` is the newest). Workers' traces are logs."""
    if trace.actor.startswith("worker:"):
        return None
    parts = []
    if version == 1:
        parts.append(trace.rationale)
    if version == trace.version and trace.outcome:
        parts.append(trace.outcome)
    if not parts:
        return None
    return Source(
        ref=f"decision:{trace.decision_id}@v{version}",
        kind=DECISION,
        tenant=trace.tenant,
        scope=trace.scope,
        owner_id=trace.owner_id,
        seq=seq,
        fact_id=trace.decision_id,
        key=f"decision:{trace.decision_id}",
        text="\n".join(parts),
        subject=None,
        memory_type=DECISION_CLAIM_TYPE,
        observed_at=trace.recorded_at,
    )


def claim_id(tenant: str, source_ref: str, ordinal: int) -> str:
    """Derived from what it is, not drawn: a reduce run again stages the same claim, not a second."""
    return hashlib.sha256(f"{tenant}\x1f{source_ref}\x1f{ordinal}".encode()).hexdigest()[:24]


def claim_key(about: str, text: str) -> str:
    """The key of a new claim: what it is about and a digest of what it says (said again, the same key)."""
    digest = hashlib.sha256(canonical_form(text).encode()).hexdigest()[:12]
    return f"reflect:{slug(about)[:48]}:{digest}"


def claims_of(source: Source) -> tuple[Claim, ...]:
    if source.kind == TRANSCRIPT:
        return _transcript_claims(source)
    said = sentences(source.text)
    # One statement that is the capture's whole text: the capture already states it.
    whole = source.holds_statement and len(said) == 1 and canonical_form(said[0]) == canonical_form(source.text)
    return tuple(
        _claim(
            source,
            n,
            text,
            source.key if whole else claim_key(source.subject or source.kind, text),
            source.subject,
            whole=whole,
        )
        for n, text in enumerate(said)
    )


def _claim(source: Source, n: int, text: str, key: str, subject: str | None, **more) -> Claim:
    return Claim(
        claim_id=claim_id(source.tenant, source.ref, n),
        tenant=source.tenant,
        scope=source.scope,
        owner_id=source.owner_id,
        source_ref=source.ref,
        source_kind=source.kind,
        source_seq=source.seq,
        source_fact=source.fact_id,
        source_key=source.key,
        ordinal=n,
        text=text,
        key=key,
        memory_type=source.memory_type,
        subject=subject,
        observed_at=more.pop("observed_at", None) or source.observed_at,
        **more,
    )


def turns_of(text: str, speaker: str | None, base_id: str, at: datetime | None) -> tuple[Turn, ...]:
    """A transcript's turns: ``speaker: words`` lines (a window), or the whole text said by
    ``speaker`` (a note). Someone named speaks as a user; the roles keep their own."""
    lines: list[tuple[str, str]] = []
    for line in text.splitlines():
        m = _SPEAKER.match(line)
        if m and speaker is None:
            lines.append((m.group("who").strip(), m.group("said")))
        elif lines:
            lines[-1] = (lines[-1][0], f"{lines[-1][1]}\n{line}")
    if speaker is not None or not lines:
        lines = [(speaker or "user", text)]
    return tuple(
        Turn(i, who if who in _ROLES else "user", said, who, f"{base_id}:{i}", at)
        for i, (who, said) in enumerate(lines)
    )


def _transcript_claims(source: Source) -> tuple[Claim, ...]:
    speaker = None if source.window else (source.subject or "user")
    turns = turns_of(source.text, speaker, source.ref, source.observed_at)
    found = RuleExtractor().extract(turns, session_date=source.observed_at).facts
    return tuple(
        _claim(
            source,
            n,
            fact.value,
            fact.key,
            fact.subject,
            relations=(fact.relation,) if fact.relation else (),
            observed_at=fact.valid_from,
        )
        for n, fact in enumerate(found)
    )
