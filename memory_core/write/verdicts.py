"""The peer verdict of a write: a pure function of the candidate, its close peers and the rules.

Peers are live facts of the same memory type under other keys of the same namespace whose cosine
with the candidate reaches the threshold. In order:

1. ``merge``: a peer says the same thing in the same canonical form; nothing new is inserted.
2. ``rejected``: a pinned peer is close; the write is refused (409 PINNED_CONFLICT).
3. ``refines`` (newest_wins only): the candidate is a templated substitution of peers (same
   subject and predicate, another object); they are retired behind it. A substituted peer stated
   later than the candidate (or locked) makes it a ``conflict`` instead.
4. ``duplicate``: a peer at or above the duplicate threshold with the same content words, unless
   each side states a value the other lacks; nothing new is inserted.
5. ``conflict``: any other close peer; both sides are flagged and served.

A key-identified type (a decision) is identified by its key: any close peer is a conflict, and a
pinned peer does not refuse it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from .templates import canonical_form, content_words, substitution, values_differ
from .tenant_config import Policy


@dataclass(frozen=True, slots=True)
class Peer:
    fact_id: str
    key: str
    text: str
    cosine: float
    valid_at: datetime
    pinned: bool = False
    locked: bool = False


@dataclass(frozen=True, slots=True)
class Candidate:
    text: str
    valid_at: datetime
    key_identified: bool = False


@dataclass(frozen=True, slots=True)
class Verdict:
    kind: str  # no_peers | merge | rejected | refines | duplicate | conflict
    peers: tuple[Peer, ...] = ()  # the peers the verdict acts on (merged into, retired, flagged, ...)
    reason: str = ""

    @property
    def inserts(self) -> bool:
        """Does the candidate land as a new row?"""
        return self.kind in ("no_peers", "refines", "conflict")


def decide(
    candidate: Candidate, peers: Sequence[Peer], *, threshold: float, duplicate_threshold: float, policy: Policy
) -> Verdict:
    close = sorted((p for p in peers if p.cosine >= threshold), key=lambda p: (-p.cosine, p.key))
    if policy is Policy.APPEND_ONLY or not close:
        return Verdict("no_peers")
    if candidate.key_identified:
        return Verdict("conflict", tuple(close), "a decision is identified by its key")
    form = canonical_form(candidate.text)
    same = [p for p in close if canonical_form(p.text) == form]
    if same:
        return Verdict("merge", (same[0],), "a peer states it in the same canonical form")
    pinned = [p for p in close if p.pinned]
    if pinned:
        return Verdict("rejected", tuple(pinned), "a pinned peer is close")
    if policy is Policy.NEWEST_WINS:
        substituted = [p for p in close if substitution(p.text, candidate.text) is not None]
        if substituted:
            blocked = [p for p in substituted if p.valid_at > candidate.valid_at or p.locked]
            if blocked:
                return Verdict(
                    "conflict", tuple(blocked), "a substituted peer is stated later or locked, so it is not retired"
                )
            return Verdict("refines", tuple(substituted), "same subject and predicate, another object")
    words = content_words(candidate.text)
    for peer in close:
        if (
            peer.cosine >= duplicate_threshold
            and content_words(peer.text) == words
            and not values_differ(peer.text, candidate.text)
        ):
            return Verdict("duplicate", (peer,), "the same content words at the duplicate threshold")
    return Verdict("conflict", tuple(close), "a close peer says something else")
