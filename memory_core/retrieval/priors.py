"""Query-side signals that reorder near candidates: dates named in the query, and participants.

Pure functions. A prior is a small additive term on the fused score, so it can only reorder
candidates the legs already found; it never brings in a row no leg returned.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Sequence

from .relative_dates import event_offsets, relative_spans
from .spans import DateSpan, month_span

MONTHS = {
    m: i + 1
    for i, m in enumerate(
        "january february march april may june july august september october november december".split()
    )
}
_MON = "(" + "|".join(MONTHS) + ")"
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+" + _MON + r",?\s+(\d{4})\b", re.I)
_MONTH_DAY_YEAR = re.compile(r"\b" + _MON + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", re.I)
_MONTH_YEAR = re.compile(r"\b" + _MON + r",?\s+(\d{4})\b", re.I)
_YEAR = re.compile(r"\b(?:in|of|during|since)\s+((?:19|20)\d{2})\b", re.I)

# A row observed from a week before to two weeks after a named date counts as near it: people
# talk about an event in the days after it more than before.
BEFORE, AFTER = timedelta(days=7), timedelta(days=14)
EXACT_DAY_BONUS = 0.5


def dates_in(query: str, reference: date | None = None) -> list[DateSpan]:
    """The dates a query names: explicit ones ('8 May, 2023', 'May 8, 2023', 'May 2023', 'in
    2023'), and relative ones ('yesterday', 'last May', 'two weeks before 8 May, 2023',
    ``retrieval.relative_dates``) counted from the last explicit day it names, else from
    ``reference`` (the query's as_of; without one, relative dates are left out)."""
    explicit = _explicit_dates(query)
    days = [s.start for s in explicit if s.kind == "day"]
    anchor = days[-1] if days else reference
    for offset in event_offsets(query):  # counted from an event's day, not a named one (the search resolves it)
        query = query.replace(offset.phrase, " ")
    return explicit + (relative_spans(query, anchor, named_day=bool(days)) if anchor is not None else [])


def _explicit_dates(query: str) -> list[DateSpan]:
    spans: list[DateSpan] = []
    used: list[tuple[int, int]] = []
    for pattern, day_first in ((_DAY_MONTH_YEAR, True), (_MONTH_DAY_YEAR, False)):
        for m in pattern.finditer(query):
            if day_first:
                d, mo, y = int(m.group(1)), MONTHS[m.group(2).lower()], int(m.group(3))
            else:
                mo, d, y = MONTHS[m.group(1).lower()], int(m.group(2)), int(m.group(3))
            try:
                day = date(y, mo, d)
            except ValueError:
                continue
            spans.append(DateSpan("day", day, day))
            used.append(m.span())
    for m in _MONTH_YEAR.finditer(query):
        if any(a <= m.start() < b for a, b in used):
            continue
        try:
            spans.append(month_span(int(m.group(2)), MONTHS[m.group(1).lower()]))
        except ValueError:  # year 0, or past the calendar's end
            continue
    if not spans:
        spans += [
            DateSpan("year", date(int(m.group(1)), 1, 1), date(int(m.group(1)), 12, 31)) for m in _YEAR.finditer(query)
        ]
    return spans


def date_match(spans: Sequence[DateSpan], when: datetime | None) -> float:
    """1 when ``when`` lies near a named date (+0.5 on the exact day named), else 0."""
    if when is None or not spans:
        return 0.0
    day = when.date()
    score = 0.0
    for span in spans:
        if _near(span, day):
            score = max(score, 1.0)
    if any(s.kind == "day" and s.start == day for s in spans):
        score += EXACT_DAY_BONUS
    return score


def _near(span: DateSpan, day: date) -> bool:
    """From a week before the span to two weeks after it (the window cut at the calendar's ends)."""
    start = span.start - BEFORE if span.start > date.min + BEFORE else date.min
    end = span.end + AFTER if span.end < date.max - AFTER else date.max
    return start <= day <= end


def _name_pattern(names: Sequence[str]) -> re.Pattern[str] | None:
    names = [n for n in names if n.strip()]
    if not names:
        return None
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")(?:'s|\u2019s)?\b", re.I)


def named_participants(query: str, participants: Sequence[str]) -> list[str]:
    pattern = _name_pattern(participants)
    if pattern is None:
        return []
    found = {m.group(1).lower() for m in pattern.finditer(query)}
    return [p for p in participants if p.lower() in found]


def without_participants(query: str, participants: Sequence[str]) -> str:
    """The query with the participants' names removed: every row of a conversation is about them,
    so to an embedder their names are noise that pulls towards greetings and small talk."""
    pattern = _name_pattern(participants)
    if pattern is None:
        return query
    stripped = re.sub(r"[,\s]*" + pattern.pattern, "", query, flags=re.I)
    stripped = " ".join(stripped.split())
    return stripped or query
