"""A small context-distillation driver, to exercise the harvest bridge end to end.

It replays a transcript through a token window the way an agent runtime distils its context:

* a **compaction cut** when the window overflows: the oldest half of the window is evicted;
* a **recap boundary** every ``recap_every`` turns: the turns since the last recap are folded
  into a recap line and evicted;
* a **stateful boundary** at a step marker (a ``system`` message whose content starts with
  ``[step]``): the whole window is evicted, the run carrying its state forward.

Every evicted span goes to ``bridge.on_boundary`` with the boundary's generation. Tokens are
counted as whitespace-separated words: the driver needs an order of magnitude, not a tokenizer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from .harvest import HarvestBridge

STEP_MARKER = "[step]"


def tokens(message: dict[str, Any]) -> int:
    return len(message["content"].split()) + 4  # a few for the role and framing


@dataclass
class DistillReport:
    boundaries: dict[str, int] = field(default_factory=lambda: {"compaction": 0, "recap": 0, "stateful": 0})
    generation: int = 0
    evicted_turns: int = 0
    window_turns: int = 0
    peak_tokens: int = 0


@dataclass
class DistillationDriver:
    bridge: HarvestBridge
    window_tokens: int = 600
    recap_every: int = 20
    session: str | None = None

    def replay(self, transcript: Sequence[dict[str, Any]]) -> DistillReport:
        report = DistillReport()
        window: list[dict[str, Any]] = []
        since_recap: list[dict[str, Any]] = []

        def evict(kind: str, span: list[dict[str, Any]]) -> None:
            if not span:
                return
            report.boundaries[kind] += 1
            report.generation += 1
            report.evicted_turns += len(span)
            self.bridge.on_boundary(kind, span, generation=report.generation, session=self.session)

        for message in transcript:
            if message.get("role") == "system" and message.get("content", "").startswith(STEP_MARKER):
                evict("stateful", [m for m in window if m.get("role") != "system"])
                window, since_recap = [], []
                continue
            window.append(message)
            since_recap.append(message)
            size = sum(tokens(m) for m in window)
            report.peak_tokens = max(report.peak_tokens, size)
            if size > self.window_tokens:
                cut = max(1, len(window) // 2)
                span = [m for m in window[:cut] if m.get("role") != "system"]
                window = window[cut:]
                gone = {id(m) for m in span}
                since_recap = [m for m in since_recap if id(m) not in gone]
                evict("compaction", span)
            if len(since_recap) >= self.recap_every:
                kept = {id(m) for m in window}
                span = [m for m in since_recap if m.get("role") != "system" and id(m) in kept]
                gone = {id(m) for m in span}
                window = [m for m in window if id(m) not in gone]
                window.insert(0, {"role": "system", "content": f"recap of {len(span)} turns"})
                since_recap = []
                evict("recap", span)
        report.window_turns = len(window)
        return report
