"""What a failed judge call means for a resolver pass, as pure functions.

The pass applies the outcome (``services/resolver.py``); deciding it here keeps the rules in
one place: a refused key or model stops the pass, a transient failure leaves the row owed, any
other refusal refuses only this row (unless the same one keeps coming in its namespace), and
an answer with nothing usable counts an attempt, since it was paid for.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import MemcoreError
from ..llm import LLMMalformed, LLMRefused, LLMUnavailable
from .actions import ResolverSettings

# The provider refuses the key or the model: every further call would get the same answer.
KEY_OR_MODEL = frozenset({401, 403, 404})

Streak = tuple[str, int]  # (what failed, how many rows in a row)
NO_STREAK: Streak = ("", 0)


@dataclass(frozen=True, slots=True)
class Outcome:
    """``what``: stop (the pass ends, the row owed), owed (the row waits, no attempt), refuse
    (stamped errored when the pass ends), pause (the namespace waits, every row of it owed),
    attempt (one attempt counted, the row owed) or give_up (stamped errored, attempt counted)."""

    what: str
    why: str
    cause: str  # what a worker compares pass to pass: no URL, no message, so one stop reads the same
    transient: Streak  # the pass's transient streak after this failure
    refusals: Streak  # this namespace's refusal streak after this failure


def on_failure(
    exc: MemcoreError, attempts: int, transient: Streak, refusals: Streak, settings: ResolverSettings
) -> Outcome:
    """What a failed call on a row with ``attempts`` attempts means, given the pass's transient
    streak and the row's namespace's refusal streak so far."""
    if isinstance(exc, LLMUnavailable):
        kind = exc.message.split("(")[-1].split(")")[0][:40]
        streak = (kind, transient[1] + 1 if transient[0] == kind else 1)
        if streak[1] >= settings.outage_streak:
            why = f"the same transient failure {streak[1]} rows in a row: {exc.message}"
            return Outcome("stop", why, f"outage: {kind}", streak, refusals)
        return Outcome("owed", exc.message, "", streak, refusals)
    if isinstance(exc, LLMRefused):
        status = exc.details.get("http_status")
        if status in KEY_OR_MODEL:
            why = f"the provider refused the key or the model (HTTP {status}): {exc.message}"
            return Outcome("stop", why, f"provider refused: HTTP {status}", NO_STREAK, refusals)
        kind = f"refused {status}" if status is not None else "refused"
        streak = (kind, refusals[1] + 1 if refusals[0] == kind else 1)
        if streak[1] >= settings.refusal_streak:
            why = f"the same refusal ({kind}) {streak[1]} rows in a row: {exc.message}"
            return Outcome("pause", why, "", NO_STREAK, NO_STREAK)
        return Outcome("refuse", exc.message, "", NO_STREAK, streak)
    if isinstance(exc, LLMMalformed):
        # An answer came (the provider is up, the request was accepted): both streaks end.
        if attempts + 1 >= settings.malformed_attempts:
            return Outcome("give_up", exc.message, "", NO_STREAK, NO_STREAK)
        return Outcome("attempt", exc.message, "", NO_STREAK, NO_STREAK)
    raise TypeError(f"not a judge failure: {type(exc).__name__}")  # a bug: let it surface


def unjudged_flag(attempts: int, settings: ResolverSettings) -> str:
    """A row whose answer left one of its flags unjudged: ``attempt`` (stays owed, judged again)
    while it has been re-judged fewer than ``flag_rejudges`` times, else ``give_up``."""
    return "attempt" if attempts < settings.flag_rejudges else "give_up"
