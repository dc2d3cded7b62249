"""``set_from_messages`` on the Memory tool: durable facts from a conversation, in one write."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Sequence

from ..identity import Scope
from ..temporal import parse_instant
from .model import Extractor, parse_messages
from .pipeline import ExtractionState, StepContext, resolve_steps, run_steps

if TYPE_CHECKING:
    from ..api import Memory


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
            "usage": dataclasses.asdict(usage) if usage is not None else None,
        }


class ExtractionOps:
    _memory: "Memory"

    def set_from_messages(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        session: str | None = None,
        session_date: datetime | str | None = None,
        scope: str | Scope = Scope.USER,
        steps: Sequence[str] | None = None,
        extractor: Extractor | None = None,
        compaction_generation: int | None = None,
        dry_run: bool = False,
    ) -> ExtractionResult:
        """Extract durable facts from ``messages`` ({role, content, name?, id?, at?}) and write them
        with the turns read (evidence) and the verbatim windows, in one transaction. Keys name the
        subject and the attribute (``caroline:lives_in``), so a later statement supersedes."""
        memory = self._memory
        identity = self.identity  # type: ignore[attr-defined]
        session = session or identity.session or "session"
        turns = parse_messages(messages, session=session)
        chosen = resolve_steps(steps, memory.steps)
        extractor = extractor or memory.extractor
        namespace = identity.namespace(scope)  # refuse a missing grant before any work
        origin = self.origin if self.origin != "memory.api" else "memory.set_from_messages"  # type: ignore[attr-defined]
        writer = memory.for_run(dataclasses.replace(identity, session=session, model=extractor.name), origin=origin)
        state = ExtractionState(
            turns, session, parse_instant(session_date, "session_date"), compaction_generation=compaction_generation
        )
        run_steps(state, StepContext(writer, extractor, namespace.scope, dry_run), chosen)
        written = state.written
        fact_keys = tuple(
            sorted(
                {r.key for r in (written.written if written else ()) if not r.key.startswith(("evidence:", "chunk:"))}
            )
        )
        evidence = len({r.key for r in (written.written if written else ()) if r.key.startswith("evidence:")})
        extracted = len(state.facts) + sum(len(v) for v in state.dropped.values())
        return ExtractionResult(
            session,
            extractor.name,
            tuple(n for n, _ in chosen),
            extracted,
            fact_keys,
            {k: tuple(v) for k, v in state.dropped.items()},
            tuple(state.forgotten),
            evidence,
            dry_run,
            state.usage,
            tuple(state.notes),
        )
