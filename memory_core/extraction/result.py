"""What ``set_from_messages`` answers: what was extracted, written, dropped and forgotten."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ExtractionResult:
    session: str
    extractor: str
    steps: tuple[str, ...]
    extracted: int  # facts the extractor proposed
    written: tuple[str, ...]  # fact keys written (new rows)
    dropped: dict[str, tuple[str, ...]]  # step -> keys it dropped
    forgotten: tuple[str, ...]
    evidence: int  # turns written as evidence rows
    dry_run: bool
    usage: Any = None
    notes: tuple[str, ...] = field(default=())
    learnings: tuple[str, ...] = field(default=())  # keys of rules about the agent filed for review, not written

    def to_dict(self) -> dict[str, Any]:
        usage = self.usage
        return {
            "session": self.session,
            "extractor": self.extractor,
            "steps": list(self.steps),
            "extracted": self.extracted,
            "written": list(self.written),
            "dropped": {k: list(v) for k, v in self.dropped.items()},
            "forgotten": list(self.forgotten),
            "evidence": self.evidence,
            "dry_run": self.dry_run,
            "notes": list(self.notes),
            "learnings": list(self.learnings),
            "usage": dataclasses.asdict(usage) if usage is not None else None,
        }
