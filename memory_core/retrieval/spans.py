"""A stretch of calendar days a query names (explicitly or relative to a day): what the date prior
matches a row's time against."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta


@dataclass(frozen=True, slots=True)
class DateSpan:
    kind: str  # day | week | month | year | range
    start: date
    end: date


def month_span(year: int, month: int) -> DateSpan:
    last = date(year + (month == 12), month % 12 + 1, 1) - timedelta(days=1)
    return DateSpan("month", date(year, month, 1), last)
