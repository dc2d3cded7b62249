"""Notes a run session writes one after another are a conversation: each new note's index context
is the words of the notes written just before it in that session. Pure decisions; the session
keeps the tails (``session.conversations``) and the write path applies them.

Why: an answer's words often echo the question that prompted it a turn or two earlier, so BM25
finds a turn by its neighbours' words too (docs/retrieval.md, "Conversations"). The words go into
the row's index context, never its value: a read gives back exactly what was written.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..model import FactVersion, Kind, Op

# How many earlier notes of the session a note's context carries.
CONTEXT_TURNS = 2


@dataclass(frozen=True, slots=True)
class Said:
    """One earlier note of a run session: its fact and its words."""

    fact_id: str
    key: str
    text: str


def wants_context(kind: Kind, context: str | None, session: str | None) -> bool:
    """A note written in a run session without a context of its own gets its session's."""
    return kind is Kind.NOTE and context is None and session is not None


def context_of(earlier: Sequence[Said]) -> str | None:
    """The index context of the next note: the words of the last ``CONTEXT_TURNS`` notes."""
    words = " ".join(s.text for s in earlier[-CONTEXT_TURNS:] if s.text.strip())
    return words or None


def opens_turn(row: FactVersion) -> bool:
    """Is this version row a new note said in a run session (not a restatement or a closing row)?"""
    return row.kind is Kind.NOTE and row.op is Op.SET and row.provenance.session is not None


# Notes a tail holds: more than a context reads, so one deleted or made high since still leaves
# the context its full length.
TAIL_TURNS = CONTEXT_TURNS * 4


def followed(tail: Sequence[Said], said: Iterable[Said]) -> tuple[Said, ...]:
    """The tail after ``said`` were written, kept to ``TAIL_TURNS``."""
    return (*tail, *said)[-TAIL_TURNS:]


def without_quote(context: str | None, text: str) -> str | None:
    """``context`` with ``text`` taken out where it stands as one of the joined notes (a redacted
    note's words leave the contexts of the notes that followed it); other words are left alone."""
    if context is None or not text:
        return context
    kept = re.sub(r"(?:^|(?<= ))" + re.escape(text) + r"(?= |$)", " ", context)
    return " ".join(kept.split()) or None


def requoted(quoting: Iterable[FactVersion], text: str) -> list[FactVersion]:
    """The rows whose index context quoted ``text`` as one of its joined notes, each once, with it
    taken out (a row that holds the words only inside other words is left as it is)."""
    by_id = {r.id: r for r in quoting}
    out = []
    for row in by_id.values():
        context = without_quote(row.index_context, text)
        if context != row.index_context:
            out.append(dataclasses.replace(row, index_context=context))
    return out
