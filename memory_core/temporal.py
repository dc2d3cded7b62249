"""Time values: parsing, validation and the bi-temporal predicates.

Valid time: a fact is live at ``as_of`` when ``valid_at <= as_of`` and (``invalid_at`` is null or
``as_of < invalid_at``); a known future end does not hide the fact today.
Transaction time: the store believed a version at ``known_at`` when ``created_at <= known_at``.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from .errors import InvalidInterval, MalformedTimestamp, NaiveDatetime

# Stored intervals use this instead of NULL inside comparisons: far beyond any real date.
END_OF_TIME = datetime(9999, 12, 31, tzinfo=timezone.utc)


def require_aware(value: datetime, field: str) -> datetime:
    """Return ``value`` in UTC; refuse a naive datetime, which would be read in an unknown zone."""
    if not isinstance(value, datetime):
        raise MalformedTimestamp(f"{field} must be a datetime, got {type(value).__name__}", field=field)
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise NaiveDatetime(
            f"{field} has no timezone; pass an aware datetime such as 2024-05-01T00:00:00+00:00",
            field=field,
        )
    try:
        utc = value.astimezone(timezone.utc)
    except OverflowError:  # year 1 at +01:00, year 9999 at -01:00: no UTC instant in range
        raise MalformedTimestamp(f"{field} is out of range once put in UTC", field=field) from None
    if utc > END_OF_TIME:  # the store's "never ends": an instant past it could not be ordered before it
        raise MalformedTimestamp(
            f"{field} is after the last instant the store keeps, {END_OF_TIME.isoformat()}", field=field
        )
    return utc


# An instant as callers may give one: aware datetime, ISO-8601 text, or None ("now" / unbounded).
Instant = datetime | str | None

# The one spelling accepted: date, then optionally T (or a space) and a time, then a zone.
# datetime.fromisoformat alone takes far more (week dates, compact forms, and a NUL before the
# zone), so text is matched whole first: trailing garbage never passes as part of an instant.
_ISO_INSTANT = re.compile(
    r"\d{4}-\d{2}-\d{2}"
    r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)?"
    r"(?:[Zz]|[+-]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?",
    re.ASCII,
)


def parse_instant(text: Instant, field: str) -> datetime | None:
    """Parse an ISO-8601 instant (``Z`` accepted). ``None`` stays ``None``."""
    if text is None:
        return None
    if isinstance(text, datetime):
        return require_aware(text, field)
    if not isinstance(text, str) or not text.strip():
        raise MalformedTimestamp(f"{field} must be an ISO-8601 string, got {text!r:.60}", field=field)
    raw = text.strip(" ")
    if _ISO_INSTANT.fullmatch(raw) is None:
        raise MalformedTimestamp(
            f"{field} is not an ISO-8601 instant: {text!r:.60} (expected e.g. 2024-05-01T09:30:00Z)",
            field=field,
        )
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        raise MalformedTimestamp(
            f"{field} is not an ISO-8601 instant: {text!r:.60} (expected e.g. 2024-05-01T09:30:00Z)",
            field=field,
        ) from None
    return require_aware(parsed, field)


def check_interval(valid_at: datetime, invalid_at: datetime | None) -> None:
    if invalid_at is not None and invalid_at <= valid_at:
        raise InvalidInterval(
            f"invalid_at ({invalid_at.isoformat()}) must be later than valid_at ({valid_at.isoformat()})",
            valid_at=valid_at.isoformat(),
            invalid_at=invalid_at.isoformat(),
        )


def live_at(valid_at: datetime, invalid_at: datetime | None, as_of: datetime) -> bool:
    return valid_at <= as_of and (invalid_at is None or as_of < invalid_at)


def iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(timezone.utc).isoformat()


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def micros(value: datetime | None) -> int | None:
    """An instant as microseconds since the epoch (how the retrieval index stores time)."""
    if value is None:
        return None
    return int((value - _EPOCH) / timedelta(microseconds=1))


def from_micros(value: int | None) -> datetime | None:
    if value is None:
        return None
    return _EPOCH + timedelta(microseconds=int(value))
