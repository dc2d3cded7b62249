"""The fold: what a judge's verdict on one pair does, as a pure function. Precision first.

| verdict | confidence | action |
|---|---|---|
| update / contradiction naming another entity or attribute | any | nothing (the answer contradicts itself) |
| any | below ``clear`` | nothing |
| update / contradiction | below ``flag`` | nothing |
| update, policy auto_reinforce or newest_wins | ``retire`` or more | retire the peer if it was stated first |
| update (``flag`` to ``retire``, or manual_review), contradiction | ``flag`` or more | flag both rows |
| elaboration, restatement, related, unrelated | ``clear`` or more | clear a flag between the pair |

An update retires only a peer asserted strictly before the judged row; equal order, a peer
asserted later, or two rows both dated to the same day go to review (a flag) instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..errors import InvalidInput

VERDICTS = ("update", "contradiction", "elaboration", "restatement", "related", "unrelated")
COMPATIBLE = ("elaboration", "restatement", "related", "unrelated")


@dataclass(frozen=True, slots=True)
class Thresholds:
    retire: float = 0.98
    flag: float = 0.95
    clear: float = 0.90

    def __post_init__(self) -> None:
        values = (self.retire, self.flag, self.clear)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= 1 for v in values):
            raise InvalidInput("resolver thresholds must be numbers in (0, 1]", field="resolver_thresholds")
        if not self.retire >= self.flag >= self.clear:
            raise InvalidInput(
                f"resolver thresholds must keep retire >= flag >= clear (got {self.retire}, {self.flag}, {self.clear})",
                field="resolver_thresholds",
            )


@dataclass(frozen=True, slots=True)
class Judgement:
    peer: str  # the peer's fact id
    verdict: str
    confidence: float
    same_entity: bool
    same_attribute: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class PairFacts:
    """What the fold needs to know about a pair beyond the verdict."""

    judged_asserted: datetime  # when each row's value was first asserted (see ``assertion_order``)
    peer_asserted: datetime
    judged_dated: datetime | None  # the writer's own valid_at, when it gave one
    peer_dated: datetime | None
    flagged: bool  # is there a flag between the pair now?


@dataclass(frozen=True, slots=True)
class Action:
    kind: str  # retire | flag | clear | nothing
    why: str


def fold(j: Judgement, pair: PairFacts, policy: str, t: Thresholds) -> Action:
    if j.verdict not in VERDICTS:
        return Action("nothing", f"unknown verdict {j.verdict!r}")
    if j.verdict in ("update", "contradiction") and not (j.same_entity and j.same_attribute):
        return Action("nothing", "the answer names another entity or attribute")
    if j.confidence < t.clear:
        return Action("nothing", f"confidence {j.confidence:.2f} below clear {t.clear}")
    if j.verdict in COMPATIBLE:
        return Action("clear", "compatible") if pair.flagged else Action("nothing", "compatible, no flag to clear")
    if j.confidence < t.flag:
        return Action("nothing", f"confidence {j.confidence:.2f} below flag {t.flag}")
    if j.verdict == "update" and j.confidence >= t.retire and policy in ("auto_reinforce", "newest_wins"):
        if pair.judged_dated and pair.peer_dated and pair.judged_dated.date() == pair.peer_dated.date():
            return Action("flag", "both rows dated the same day: no order between them")
        if pair.peer_asserted < pair.judged_asserted:
            return Action("retire", "update, and the peer was stated first")
        return Action("flag", "update, but the peer was not stated first")
    return Action("flag", f"{j.verdict} at {j.confidence:.2f}")


def parse_thresholds(retire: float | None = None, flag: float | None = None, clear: float | None = None) -> Thresholds:
    base = Thresholds()
    return Thresholds(
        base.retire if retire is None else retire,
        base.flag if flag is None else flag,
        base.clear if clear is None else clear,
    )
