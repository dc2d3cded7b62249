"""Which live rows of a namespace belong together: pure functions over rows and their vectors.

A row takes part only if a merge may retire it: live and unexpired, not high, not pinned or
locked, not flagged against a peer, not redacted, of an embedded type. Two rows link only when
they are of the same kind and type and say things the same way round: a suppression ("does not
like X") never merges with a positive statement, however close their vectors.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Callable, Sequence

import numpy as np

from ..extraction.coref import candidates
from ..lifecycle.history import REDACTED_JSON
from ..model import FactVersion, Status
from ..texts import value_text
from .model import ConsolidationSettings

_NEGATION = re.compile(
    r"\b(?:not|never|no longer|don'?t|doesn'?t|didn'?t|won'?t|isn'?t|aren'?t|wasn'?t|can'?t|cannot|"
    r"dislikes?|hates?|avoids?|stopped|quit|gave up|allergic)\b|n't\b",
    re.IGNORECASE,
)
BLOCK = 1024  # rows per block of the cosine product: memory stays O(BLOCK * n)


def excluded(state: FactVersion, now: datetime, embedded: Callable[[str], bool]) -> str | None:
    """Why a row may not be merged (None: it may)."""
    if state.status is not Status.ACTIVE:
        return f"status {state.status.value}"
    if state.expired(now):
        return "expired"
    if state.sensitivity == "high":
        return "high"
    if state.pinned:
        return "pinned"
    if state.locked:
        return "locked"
    if state.value_json == REDACTED_JSON:
        return "redacted"
    if not embedded(state.memory_type):
        return "not embedded"
    return None


def suppression(text: str) -> bool:
    """Does the text say something is not so (a suppression), rather than that it is?"""
    return bool(_NEGATION.search(text))


def entities(state: FactVersion) -> frozenset[str]:
    """What a row is about: its subject, its relations' ends and the names in its text."""
    found = {state.subject} if state.subject else set()
    for relation in state.relations:
        found.update((relation.subject, relation.object))
    for name in candidates(value_text(state.value)):
        found.update((name.text, *name.text.split()))  # "the Alps Ana" names the Alps and Ana
    return frozenset(e.casefold() for e in found if e)


def group_of(state: FactVersion) -> tuple[str, str, bool]:
    """Rows of different groups never link."""
    return state.kind.value, state.memory_type, suppression(value_text(state.value))


def clusters(
    rows: Sequence[FactVersion], vectors: np.ndarray, settings: ConsolidationSettings
) -> list[tuple[int, ...]]:
    """Clusters of two or more rows, as indexes into ``rows``. ``vectors`` are unit rows. Each
    cluster grows around a seed (rows in the order given, so the oldest seed first when the
    caller orders them so): every member links to its seed, never through a chain of members."""
    n = len(rows)
    if n < 2:
        return []
    groups = [group_of(r) for r in rows]
    names = [entities(r) for r in rows]
    taken = np.zeros(n, dtype=bool)
    out: list[tuple[int, ...]] = []
    for start in range(0, n, BLOCK):
        block = vectors[start : start + BLOCK] @ vectors.T  # cosines of this block's seeds
        for offset in range(block.shape[0]):
            seed = start + offset
            if taken[seed]:
                continue
            cosines = block[offset]
            order = np.argsort(-cosines, kind="stable")
            members = [seed]
            for other in order:
                cos = float(cosines[other])
                if cos < settings.min_cosine or len(members) >= settings.max_cluster:
                    break
                other = int(other)
                if other == seed or taken[other] or groups[other] != groups[seed]:
                    continue
                if cos >= settings.strong_cosine or names[seed] & names[other]:
                    members.append(other)
            if len(members) > 1:
                taken[members] = True
                out.append(tuple(sorted(members)))
    return out
