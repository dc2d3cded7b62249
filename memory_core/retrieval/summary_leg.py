"""The session-summary leg's pure parts: which sessions' digests a query's words match, and how
the rows a matching summary stands for (its turns and the facts read from them) score on the leg.

A summary matches when at least ``MIN_MATCH`` of the query's content words are words of its
digest; each row it stands for scores that share (a row two summaries stand for takes the
better). The leg is off in the default recipe; a recipe that names ``summary`` runs it
(docs/retrieval.md, "The session-summary leg"), and each hit it brought says which session's
summary matched and on which words, in the hit's ``why``.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence

MIN_MATCH = 0.5
MAX_SUMMARY_FACTS = 64  # rows the leg brings, best summary first
_WORD = re.compile(r"\w+")
_STOP = frozenset(
    "a an the i me my we you your he she it they them of in on at to for with and or is are was were be "
    "do does did what who whom which where when why how that this there about from by as s".split()
)


def words(text: str) -> set[str]:
    return {w for w in (m.group(0).casefold() for m in _WORD.finditer(text)) if w not in _STOP and len(w) > 1}


class LegFacts(dict[str, float]):
    """fact id -> the leg's score, and per fact why the leg brought it (``why``)."""

    def __init__(self, scores: Mapping[str, float] | None = None, why: Mapping[str, dict[str, Any]] | None = None):
        super().__init__(scores or {})
        self.why: dict[str, dict[str, Any]] = dict(why or {})


def summary_facts(query: str, summaries: Iterable[Any]) -> LegFacts:
    """The rows the summaries matching ``query`` stand for, each with the summary's share of the
    query's words (``summaries``: ``SessionSummary`` values: session, digest, fact_ids)."""
    asked = words(query)
    if not asked:
        return LegFacts()
    matched = []
    for summary in summaries:
        common = asked & words(summary.digest)
        share = len(common) / len(asked)
        if share >= MIN_MATCH:
            matched.append((share, summary.session, summary, sorted(common)))
    scores: dict[str, float] = {}
    why: dict[str, dict[str, Any]] = {}
    for share, session, summary, common in sorted(matched, key=lambda m: (-m[0], m[1])):
        for fact_id in summary.fact_ids:
            if fact_id in scores or len(scores) >= MAX_SUMMARY_FACTS:
                continue
            scores[fact_id] = round(share, 6)
            why[fact_id] = {"session": session, "matched": common, "digest": summary.digest}
    return LegFacts(scores, why)


def explain(fused: Sequence[tuple[dict[str, Any], float, Mapping[str, Any]]], legs: Mapping[str, Any]) -> None:
    """Put on each fused candidate why a leg that names its facts brought it (``_why``)."""
    for row, _, per_leg in fused:
        for leg, found in legs.items():
            if leg in per_leg and isinstance(found, LegFacts) and row["fact_id"] in found.why:
                row.setdefault("_why", {})[leg] = found.why[row["fact_id"]]
