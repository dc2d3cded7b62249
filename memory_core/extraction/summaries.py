"""Session summaries: one digest per conversation session, built from the turns extraction kept
(its evidence rows) and rebuilt only when those turns change.

A session's turns are named by a digest of their keys and content hashes (``turns_digest``): the
summarizing worker compares it with the stored summary's and leaves a current one alone. The
default summarizer is offline rules (``RuleSummarizer``: who spoke, and the first sentence of
each turn, cut to a budget); a model's (``adapters.llm.summarizer``) writes prose instead.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, Sequence

from ..temporal import iso

EVIDENCE_TYPE = "evidence"  # the memory type of a kept turn (``pipeline.bulk_write``)
MAX_DIGEST_CHARS = 600
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


@dataclass(frozen=True, slots=True)
class SessionTurn:
    """One kept turn: its evidence row's key, who spoke and what they said."""

    key: str
    fact_id: str
    speaker: str
    text: str
    content_sha256: str
    at: datetime | None


@dataclass(frozen=True, slots=True)
class SessionSummary:
    tenant: str
    scope: str
    owner_id: str
    session: str
    digest: str
    turns: int
    turns_digest: str  # what the digest was built from (``turns_digest``)
    fact_ids: tuple[str, ...]  # the rows it stands for: its turns and the facts read from them
    summarizer: str
    first_at: datetime | None
    last_at: datetime | None
    built_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "scope": self.scope,
            "digest": self.digest,
            "turns": self.turns,
            "turns_digest": self.turns_digest,
            "fact_ids": list(self.fact_ids),
            "summarizer": self.summarizer,
            "first_at": iso(self.first_at),
            "last_at": iso(self.last_at),
            "built_at": iso(self.built_at),
        }


class Summarizer(Protocol):
    name: str

    def summarize(self, session: str, turns: Sequence[SessionTurn]) -> str: ...


def turns_digest(turns: Sequence[SessionTurn]) -> str:
    """What a summary is current for: the session's kept turns, by key and content."""
    h = hashlib.sha256()
    for turn in sorted(turns, key=lambda t: t.key):
        h.update(f"{turn.key}\x00{turn.content_sha256}\n".encode())
    return h.hexdigest()


def spoken(text: str, speaker: str) -> str:
    """A turn's words without the ``speaker: `` its evidence row begins with."""
    prefix = f"{speaker}: "
    return text[len(prefix) :] if text.startswith(prefix) else text


class RuleSummarizer:
    """Offline and deterministic: "N turns: Ana, assistant. Ana: <first sentence> / ..." cut to
    ``max_chars`` at a turn boundary (the turns in key order, which is the transcript's)."""

    name = "rules"

    def __init__(self, max_chars: int = MAX_DIGEST_CHARS) -> None:
        self.max_chars = max_chars

    def summarize(self, session: str, turns: Sequence[SessionTurn]) -> str:
        ordered = sorted(turns, key=lambda t: t.key)
        speakers = list(dict.fromkeys(t.speaker for t in ordered))
        head = f"{len(ordered)} turn{'s' if len(ordered) != 1 else ''}: {', '.join(speakers)}."
        parts: list[str] = []
        size = len(head)
        for turn in ordered:
            words = spoken(turn.text, turn.speaker).strip()
            first = _SENTENCE.search(words)
            line = f"{turn.speaker}: {(first.group(0) if first else words).strip()[:160]}"
            if parts and size + len(line) + 3 > self.max_chars:
                parts.append("…")
                break
            parts.append(line)
            size += len(line) + 3
        return " ".join([head, " / ".join(parts)]).strip()


def plan_summary(
    tenant: str,
    scope: str,
    owner_id: str,
    session: str,
    turns: Sequence[SessionTurn],
    fact_ids: Sequence[str],
    stored: SessionSummary | None,
    summarizer: Summarizer,
    now: datetime,
) -> SessionSummary | None:
    """The summary to keep for a session, or None when the stored one is current (built from
    the same turns) or the session kept no turn."""
    if not turns:
        return None
    digest = turns_digest(turns)
    if stored is not None and stored.turns_digest == digest:
        return None
    ordered = sorted(turns, key=lambda t: t.key)  # the transcript's order (``evidence:<session>:<n>``)
    times = [t.at for t in ordered if t.at is not None]
    ids = tuple(dict.fromkeys([*(t.fact_id for t in ordered), *fact_ids]))
    return SessionSummary(
        tenant,
        scope,
        owner_id,
        session,
        summarizer.summarize(session, ordered),
        len(turns),
        digest,
        ids,
        summarizer.name,
        min(times) if times else None,
        max(times) if times else None,
        now,
    )
