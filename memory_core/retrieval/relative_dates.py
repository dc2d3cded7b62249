"""Relative dates in a query ("yesterday", "last May", "two weeks ago", "three days before
8 May, 2023"), resolved against an anchor day into the spans the date prior matches rows against.

Pure. The anchor is the date the query names explicitly when it names one ("last Friday on 23
January, 2022": the Friday before that day), else the query's reference time (its ``as_of``).
Calendar words take calendar units: "last week" is the Monday-to-Sunday week before the anchor's,
"last month" the calendar month before it; a count of units ("two weeks ago") is a day give or
take half a unit for days and weeks, the whole calendar month or year for months and years (the
date prior's own window around it does the rest). A phrase counted from another moment ("two
weeks before", "the day after") is read here only when the query names the day it counts from;
counted from an event ("two weeks before the wedding") it is an ``EventOffset``, which the search
resolves once it knows the event's day (``services.search_legs``: the day of the row that best
matches the event's words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Callable

from .spans import DateSpan, month_span

WEEKDAYS = {d: i for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())}
MONTH_NAMES = "january february march april may june july august september october november december".split()
NUMBERS = {
    w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split()) if i
} | {"a": 1, "an": 1, "a couple of": 2, "a few": 3, "several": 3}
_COUNT = r"(\d{1,3}|a couple of|a few|several|an?|" + "|".join(w for w in NUMBERS if " " not in w and len(w) > 2) + ")"
_UNIT = r"(day|week|month|year)s?"

_AGO = re.compile(r"\b" + _COUNT + r"\s+" + _UNIT + r"\s+(ago|before|earlier|after|later)\b", re.I)
_WITHIN = re.compile(  # "in the last 3 weeks", not "the last week of August"
    r"\b(?:in|over|during|within) the (?:last|past) (?:" + _COUNT + r"\s+)?" + _UNIT + r"\b(?!\s+of\b)", re.I
)
_LAST = re.compile(  # "last week", not "the last week of August"
    r"(?<!the )\b(last|this|this past|previous)\s+(week|weekend|month|year|"
    + "|".join(WEEKDAYS)
    + "|"
    + "|".join(MONTH_NAMES)
    + r")\b",
    re.I,
)
_WEEK_BEFORE = re.compile(r"\bthe (week|weekend|month|day) (before|after)\b", re.I)
_DAY_WORDS = re.compile(r"\b(the day before yesterday|yesterday|today|tonight|this morning)\b", re.I)


def _count(text: str | None) -> int:
    if not text:
        return 1
    text = text.lower()
    return int(text) if text.isdigit() else NUMBERS.get(text, 1)


def _shift(anchor: date, n: int, unit: str) -> DateSpan:
    """A day ``n`` units from ``anchor`` (negative: before), give or take half a unit."""
    unit = unit.lower()
    if unit == "day":
        day = anchor + timedelta(days=n)
        return DateSpan("day", day, day)
    if unit == "week":
        day = anchor + timedelta(weeks=n)
        return DateSpan("week", day - timedelta(days=3), day + timedelta(days=3))
    if unit == "month":
        month = anchor.month - 1 + n
        y, m = anchor.year + month // 12, month % 12 + 1
        return month_span(y, m)
    return DateSpan("year", date(anchor.year + n, 1, 1), date(anchor.year + n, 12, 31))


def _week_of(day: date) -> tuple[date, date]:
    start = day - timedelta(days=day.weekday())
    return start, start + timedelta(days=6)


def _last(word: str, what: str, anchor: date) -> DateSpan:
    what, this = what.lower(), word.lower() == "this"
    if what in ("week", "weekend"):
        start, end = _week_of(anchor if this else anchor - timedelta(days=7))
        if what == "weekend":
            start = end - timedelta(days=1)
        return DateSpan("week", start, end)
    if what == "month":
        return _shift(anchor, 0 if this else -1, "month")
    if what == "year":
        return _shift(anchor, 0 if this else -1, "year")
    if what in WEEKDAYS:  # the latest such day strictly before the anchor
        back = (anchor.weekday() - WEEKDAYS[what]) % 7 or 7
        day = anchor - timedelta(days=back)
        return DateSpan("day", day, day)
    month = MONTH_NAMES.index(what) + 1
    if this:  # "this May": the anchor's year's
        return month_span(anchor.year, month)
    # the latest such month that ended before the anchor's
    return month_span(anchor.year if month < anchor.month else anchor.year - 1, month)


def _before_after(what: str, direction: str, anchor: date) -> DateSpan:
    sign = -1 if direction.lower() == "before" else 1
    what = what.lower()
    if what == "day":
        return _shift(anchor, sign, "day")
    if what == "month":
        return _shift(anchor, sign, "month")
    days = 7 if what == "week" else 3
    a, b = (
        (anchor - timedelta(days=days), anchor - timedelta(days=1))
        if sign < 0
        else (
            anchor + timedelta(days=1),
            anchor + timedelta(days=days),
        )
    )
    return DateSpan("week", a, b)


def _within(n: int, unit: str, anchor: date) -> DateSpan:
    """From ``n`` units before ``anchor`` to it."""
    unit = unit.lower()
    if unit in ("day", "week"):
        start = anchor - timedelta(days=n * (7 if unit == "week" else 1))
    else:
        start = _shift(anchor, -n, unit).start
    return DateSpan("range", start, anchor)


# In order: a phrase an earlier rule matched is not read again by a later one.
_RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str], date], DateSpan]], ...] = (
    (
        _DAY_WORDS,
        lambda m, a: _shift(a, {"the day before yesterday": -2, "yesterday": -1}.get(m.group(1).lower(), 0), "day"),
    ),
    (
        _AGO,
        lambda m, a: _shift(
            a, (1 if m.group(3).lower() in ("after", "later") else -1) * _count(m.group(1)), m.group(2)
        ),
    ),
    (_WITHIN, lambda m, a: _within(_count(m.group(1)), m.group(2), a)),
    (_LAST, lambda m, a: _last(_which(m), m.group(2), a)),
    (_WEEK_BEFORE, lambda m, a: _before_after(m.group(1), m.group(2), a)),
)
# Phrases counted from another moment ("two weeks before", "the day after", "a week later"): read
# only when the query names the day they count from, never from its as_of ("two weeks before the
# wedding" names an event, which the planner does not resolve).
_FROM_A_DAY = frozenset({"before", "after", "earlier", "later"})
# Month names that are also words: "this may help", "this march".
_AMBIGUOUS_MONTHS = frozenset({"may", "march"})


def _which(m: re.Match[str]) -> str:
    """last | this, from "last", "previous", "this" or "this past" (which is "last")."""
    word = " ".join(m.group(1).lower().split())
    return "this" if word == "this" else "last"


def _counted_from_a_day(pattern: re.Pattern[str], m: re.Match[str]) -> bool:
    if pattern is _WEEK_BEFORE:
        return True
    return pattern is _AGO and m.group(3).lower() in _FROM_A_DAY


def _a_word_not_a_month(pattern: re.Pattern[str], m: re.Match[str]) -> bool:
    """ "this may" or "this march" in lower case: the verb, not the month."""
    return pattern is _LAST and _which(m) == "this" and m.group(2) in _AMBIGUOUS_MONTHS


def relative_spans(query: str, anchor: date, *, named_day: bool = True) -> list[DateSpan]:
    """The spans the relative dates of ``query`` name, counted from ``anchor``; each phrase once.
    ``named_day``: the anchor is a day the query names (else its as_of, from which a phrase
    counted from another moment is not read)."""
    spans: list[DateSpan] = []
    used: list[tuple[int, int]] = []
    for pattern, resolve in _RULES:
        for m in pattern.finditer(query):
            if any(a < m.end() and m.start() < b for a, b in used):
                continue
            if (not named_day and _counted_from_a_day(pattern, m)) or _a_word_not_a_month(pattern, m):
                used.append(m.span())
                continue
            try:
                spans.append(resolve(m, anchor))
            except (ValueError, OverflowError):  # past the calendar's ends
                continue
            used.append(m.span())
    return spans


# "two weeks before the wedding", "the day after her graduation": a count of units (or "the day",
# "the week", ...) before or after a possessive or definite noun phrase, the event.
_OWNER = r"(?:the|her|his|their|my|our|your)"
_EVENT_AGO = re.compile(r"\b" + _COUNT + r"\s+" + _UNIT + r"\s+(before|after)\s+(" + _OWNER + r"\s+[^,.;:!?]+)", re.I)
_EVENT_THE = re.compile(r"\bthe (week|weekend|month|day) (before|after)\s+(" + _OWNER + r"\s+[^,.;:!?]+)", re.I)
# Where an event's noun phrase ends: the words that start the rest of a question.
_EVENT_ENDS = frozenset(
    "to and or but when while that which who where did does do was were is are has have had for in on at with "
    "from by so than as if".split()
)
MAX_EVENT_WORDS = 4


@dataclass(frozen=True, slots=True)
class EventOffset:
    """A span counted from the day of an event the query names: ``phrase`` as written, the
    event's words (``event``, without its determiner), and how to count from its day."""

    phrase: str
    event: str
    direction: str  # before | after
    count: int = 1
    unit: str = "day"  # day | week | month | year
    calendar: str | None = None  # "the week before ...": week | weekend | month | day


def _event_words(noun_phrase: str) -> str:
    words = noun_phrase.split()[1:]  # without "the", "her", ...
    kept = []
    for word in words[:MAX_EVENT_WORDS]:
        if word.lower() in _EVENT_ENDS:
            break
        kept.append(word)
    return " ".join(kept)


def _offset(
    query: str,
    m: re.Match[str],
    group: int,
    direction: str,
    count: int = 1,
    unit: str = "day",
    calendar: str | None = None,
) -> EventOffset | None:
    """The offset a match names, its phrase cut where the event's words end."""
    event = _event_words(m.group(group))
    if not event:
        return None
    determiner = m.group(group).split()[0]
    phrase = f"{query[m.start() : m.start(group)]}{determiner} {event}"
    return EventOffset(phrase, event, direction, count, unit, calendar)


def event_offsets(query: str) -> list[EventOffset]:
    """The phrases of ``query`` counted from an event it names, each once, in order."""
    found: list[tuple[int, EventOffset]] = []
    for m in _EVENT_AGO.finditer(query):
        counted = _offset(query, m, 4, direction=m.group(3).lower(), count=_count(m.group(1)), unit=m.group(2).lower())
        if counted is not None:
            found.append((m.start(), counted))
    for m in _EVENT_THE.finditer(query):
        if any(start <= m.start() < start + len(o.phrase) for start, o in found):
            continue
        named = _offset(query, m, 3, direction=m.group(2).lower(), calendar=m.group(1).lower())
        if named is not None:
            found.append((m.start(), named))
    return [offset for _, offset in sorted(found, key=lambda pair: pair[0])]


def from_event(offset: EventOffset, day: date) -> DateSpan | None:
    """The span ``offset`` names once its event's day is known (None: past the calendar's ends)."""
    try:
        if offset.calendar is not None:
            return _before_after(offset.calendar, offset.direction, day)
        sign = -1 if offset.direction == "before" else 1
        return _shift(day, sign * offset.count, offset.unit)
    except (ValueError, OverflowError):
        return None
