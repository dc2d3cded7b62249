"""What the reflect pipeline keeps beside the version log: each tenant's cursor per phase, the
inputs reduce read, the claims it staged (with what each later phase added), and the two reads
of the state-change stream the substrate's own port does not answer (a tenant's events in a seq
range, and the events a claim's write produced)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol, Sequence

from ..reflect import Claim, Source
from ..substrate.events import StateChange


class ReflectStore(Protocol):
    def cursors(self, tenant: str) -> dict[str, int]:
        """Each phase's position in the tenant's event stream (a phase never run: absent)."""
        ...

    def advance(self, tenant: str, phase: str, position: int, at: datetime) -> None:
        """Move a phase's cursor forward to ``position`` (never back; not moving writes nothing)."""
        ...

    def events(self, tenant: str, since: int, upto: int, limit: int, types: Sequence[str]) -> list[StateChange]:
        """The tenant's events of ``types`` with ``since < seq <= upto``, in order, at most ``limit``."""
        ...

    def tagged(self, tenant: str, since: int, tag: str) -> list[StateChange]:
        """The tenant's events after ``since`` whose evidence holds ``tag`` (what a claim's write made)."""
        ...

    def reduced(self, tenant: str, refs: Sequence[str]) -> set[str]:
        """Which of these inputs reduce has read already."""
        ...

    def stage(self, source: Source, claims: Sequence[Claim], at: datetime) -> None:
        """Keep an input as read, with its claims, in one transaction (a claim kept already stays)."""
        ...

    def claims(self, tenant: str, *, after: int = 0, upto: int | None = None) -> list[Claim]:
        """The tenant's claims read from events ``after < seq <= upto``, in stream order."""
        ...

    def save(self, claims: Sequence[Claim], at: datetime) -> None:
        """Keep what a phase decided for each claim; a written claim's lineage (the fact that states
        it, derived from its source) is kept with it."""
        ...

    def inputs(self, tenant: str) -> list[dict[str, Any]]:
        """Every input of the tenant reduce read, in stream order, with its status."""
        ...

    def archive(self, tenant: str, refs: Sequence[str], at: datetime) -> int:
        """Mark these inputs and their claims processed; answers how many inputs changed."""
        ...
