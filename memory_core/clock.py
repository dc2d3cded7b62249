"""The injected clock. Core code asks a Clock for the time; it never calls datetime.now()."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Callable, Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """Current instant, timezone-aware UTC."""
        ...


# Every id a write mints comes from one of these (injected, so tests and replays are deterministic).
IdFactory = Callable[[], str]


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(timezone.utc)


class FixedClock:
    """A clock that only moves when told to: for tests and for replaying corpora."""

    def __init__(self, at: datetime) -> None:
        if at.tzinfo is None:
            raise ValueError("FixedClock needs a timezone-aware datetime")
        self._at = at.astimezone(timezone.utc)

    def now(self) -> datetime:
        return self._at

    def set(self, at: datetime) -> None:
        if at.tzinfo is None:
            raise ValueError("FixedClock needs a timezone-aware datetime")
        self._at = at.astimezone(timezone.utc)

    def advance(self, delta: timedelta = timedelta(seconds=1)) -> datetime:
        self._at = self._at + delta
        return self._at
