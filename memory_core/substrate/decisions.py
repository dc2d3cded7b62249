"""Decision traces and interaction records: the substrate's record of what consumers decided and
asked.

A decision trace says what a consumer (an agent, a person, a worker) decided — ``act``, ``wait``,
``escalate`` or ``no_op`` — why, on which substrate refs, under which frame, and with what
outcome once that is known. A worker that looks and decides to do nothing writes a ``no_op``
trace, so a quiet store can tell a worker that chose restraint from one that never ran.

An interaction record says who asked what through which lenses: each ``render``,
``get_context`` and ``capture``, and each piece of retrieval feedback (``useful`` /
``not_useful`` on one ref a context surfaced).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import InvalidInput
from ..inputs import text

DECISIONS = ("act", "wait", "escalate", "no_op")
FEEDBACK = ("useful", "not_useful")
DECISION_TYPE = "decision"  # a decision trace's entity type, for lenses


@dataclass(frozen=True, slots=True)
class DecisionTrace:
    decision_id: str
    version: int
    tenant: str
    scope: str
    owner_id: str
    decision: str
    rationale: str
    inputs: tuple[str, ...]
    outcome: str | None
    frame_id: str | None
    lens_id: str | None
    intent: str | None  # the frame's intent when it was made (what ``precedent`` matches on)
    tags: tuple[str, ...]  # the frame's tags when it was made
    actor: str
    recorded_at: datetime

    @property
    def text(self) -> str:
        """The trace in words (what a view or a context shows, and counts)."""
        said = f"{self.decision}: {self.rationale}"
        return f"{said} -> {self.outcome}" if self.outcome else said


def parse_decision(value: object) -> str:
    found = text(value, "decision", max_chars=20).strip().lower()
    if found not in DECISIONS:
        raise InvalidInput(f"decision must be one of {', '.join(DECISIONS)}; got {found!r}", field="decision")
    return found


def with_outcome(trace: DecisionTrace, outcome: str, at: datetime, actor: str) -> DecisionTrace:
    """The trace's next version, its outcome now known."""
    return dataclasses.replace(
        trace,
        version=trace.version + 1,
        outcome=text(outcome, "outcome", max_chars=4000),
        recorded_at=max(at, trace.recorded_at),
        actor=actor,
    )


@dataclass(frozen=True, slots=True)
class Interaction:
    interaction_id: str
    tenant: str
    consumer: str
    kind: str  # render | context | capture | feedback
    lenses: tuple[str, ...]
    frame_id: str | None
    query: str | None
    refs: tuple[str, ...]
    receipt_id: str | None
    feedback: str | None
    at: datetime
    detail: dict[str, Any] = dataclasses.field(default_factory=dict)


def parse_feedback(value: object) -> str:
    found = text(value, "verdict", max_chars=20).strip().lower()
    if found not in FEEDBACK:
        raise InvalidInput(f"verdict must be one of {', '.join(FEEDBACK)}; got {found!r}", field="verdict")
    return found
