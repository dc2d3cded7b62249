"""A resolver pass's failures, applied: the streaks, the refused rows, the paused namespaces.

The meaning of each failure is decided in ``resolver/failures.py``; this book applies it to the
ledger. A refused row is stamped only when the pass ends, since a later refusal in its
namespace may pause the namespace and leave every row of it owed, the refused ones too.
"""

from __future__ import annotations

from datetime import timedelta

from ..errors import MemcoreError
from ..identity import Namespace
from ..ports import Mark
from ..resolver.actions import PassReport, ResolverSettings
from ..resolver.failures import NO_STREAK, Streak, on_failure, unjudged_flag
from ..session import Session


class FailureBook:
    def __init__(self, session: Session, settings: ResolverSettings, report: PassReport) -> None:
        self.session, self.settings, self.report = session, settings, report
        self.transient: Streak = NO_STREAK
        self.refusals: dict[Namespace, Streak] = {}
        self.refused: dict[Namespace, list[str]] = {}  # fact ids stamped errored when the pass ends
        self.paused: set[Namespace] = set()
        self.cause = ""  # why the pass stopped, comparable pass to pass
        self.reached = False  # a call got an answer or a stop: the provider's state is known

    def drop_stale(self, skip_tenants: list[str]) -> None:
        """Rows owed longer than ``drop_after_days`` are stamped dropped, never judged: a backlog
        that old is not worth a call, and the mark says so."""
        now = self.session.clock.now()
        days = self.settings.drop_after_days
        reason = f"dropped unjudged: owed over {days} days; was owed for: "
        dropped = self.session.ledger.drop_stale(now - timedelta(days=days), now, reason, skip_tenants)
        self.report.dropped += dropped

    def failed(self, mark: Mark, exc: MemcoreError) -> bool:
        """Apply a failed call on ``mark``'s row; True when the pass must stop."""
        ns, ledger, now = mark.namespace, self.session.ledger, self.session.clock.now()
        outcome = on_failure(exc, mark.attempts, self.transient, self.refusals.get(ns, NO_STREAK), self.settings)
        self.transient, self.refusals[ns] = outcome.transient, outcome.refusals
        if outcome.what == "stop":
            self.report.stopped, self.cause, self.reached = outcome.why, outcome.cause, True
            self.report.left_owed += 1
            return True
        if outcome.what != "owed":
            self.reached = True  # the provider answered, if only to refuse
        if outcome.what == "owed":
            self.report.left_owed += 1
        elif outcome.what == "refuse":
            self.refused.setdefault(ns, []).append(mark.fact_id)
        elif outcome.what == "pause":
            until = now + timedelta(seconds=self.settings.pause_s)
            ledger.pause_namespace(ns, until, outcome.why[:300], now)
            self.paused.add(ns)
            self.report.paused += 1
            self.report.left_owed += 1 + len(self.refused.pop(ns, []))  # the refused ones stay owed too
        elif outcome.what == "attempt":
            ledger.count_attempt(mark.fact_id)
            self.report.left_owed += 1
        else:  # give_up
            ledger.stamp(mark.fact_id, "errored", now, errored=True, attempt=True)
            self.report.errored += 1
        return False

    def answered(self, ns: Namespace) -> None:
        self.transient, self.refusals[ns], self.reached = NO_STREAK, NO_STREAK, True

    def unjudged_flag(self, mark: Mark) -> None:
        """The answer left a flag of the row unjudged: judge it again later, a few times at most."""
        ledger, now = self.session.ledger, self.session.clock.now()
        if unjudged_flag(mark.attempts, self.settings) == "attempt":
            ledger.count_attempt(mark.fact_id)
            self.report.left_owed += 1
        else:
            ledger.stamp(mark.fact_id, "errored", now, errored=True, attempt=True)
            self.report.errored += 1

    def close(self) -> None:
        """Stamp the refused rows of namespaces not paused, and note a change of the stop."""
        ledger, now = self.session.ledger, self.session.clock.now()
        for ns, fact_ids in self.refused.items():
            if ledger.erasure_under_way(ns.tenant):
                continue  # no write in an org being erased: they stay owed
            for fact_id in fact_ids:
                ledger.stamp(fact_id, "errored", now, errored=True)
                self.report.errored += 1
        self.refused.clear()
        if not self.reached:
            return  # no call answered: the provider's state is what the last pass saw
        before = ledger.resolver_stop()
        if before != self.cause:
            ledger.set_resolver_stop(self.cause)
            self.report.notice = (
                f"the conflict resolver stopped: {self.report.stopped}"
                if self.cause
                else f"the conflict resolver's calls are answered again (it had stopped: {before})"
            )
