"""The saga's decisions: start, the next step, a checkpoint, what the census's answer does, and
when recovery resumes or gives up. Each returns the request's next version; nothing is written
here."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from .census import Census, owning_step
from .model import STEPS, ErasureRequest, ErasureStatus, ErasureTarget


def begin(request_id: str, target: ErasureTarget, actor: str, at: datetime) -> ErasureRequest:
    return ErasureRequest(request_id, 1, target, ErasureStatus.QUEUED, (), 0, actor, at, at)


def _next(request: ErasureRequest, at: datetime, **changes: Any) -> ErasureRequest:
    return dataclasses.replace(request, version=request.version + 1, updated_at=at, **changes)


def start_run(request: ErasureRequest, at: datetime, actor: str) -> ErasureRequest:
    """A run begins (the first or a resume): running, one more attempt, the runner named."""
    return _next(request, at, status=ErasureStatus.RUNNING, attempts=request.attempts + 1, actor=actor, error=None)


def next_step(request: ErasureRequest) -> str | None:
    """The first step not completed; None once every step has run."""
    return next((s for s in STEPS if s not in request.steps), None)


def advance(request: ErasureRequest, step: str, at: datetime) -> ErasureRequest:
    """A completed step, checkpointed."""
    if step in request.steps:
        return request
    return _next(request, at, steps=(*request.steps, step))


def census_outcome(request: ErasureRequest, census: Census, at: datetime, *, rerun: bool) -> ErasureRequest:
    """What a census decides. Zero: verified. Residue on a first look (``rerun`` False): the steps
    that own it are marked not done, so the saga runs them and counts again. Residue after that:
    failed, with the residue named."""
    counts = census.counts()
    total = census.residue_count
    if total == 0:
        return _next(
            request,
            at,
            status=ErasureStatus.VERIFIED,
            steps=(*request.steps, "census"),
            residue_count=0,
            residue=counts,
            verified_at=at,
        )
    if not rerun:
        # The owning step runs again, and so does every step after it (a second delete writes
        # an audit row whose key must go too, and a file that must be rewritten again).
        first = min(STEPS.index(s) for s in owning_step(census) | {"compact"})
        kept = tuple(s for s in request.steps if STEPS.index(s) < first)
        return _next(request, at, steps=kept, residue_count=total, residue=counts)
    named = ", ".join(f"{where}: {n}" for where, n in counts.items() if n and not where.startswith("census:"))
    return _next(
        request,
        at,
        status=ErasureStatus.FAILED,
        residue_count=total,
        residue=counts,
        error=f"residue after re-running its steps: {named}",
    )


def recovery_due(request: ErasureRequest, max_attempts: int) -> str | None:
    """What recovery does with a request: 'resume', 'abandon', or None (it has ended)."""
    if not request.holding:
        return None
    return "resume" if request.attempts < max_attempts else "abandon"


def abandon(request: ErasureRequest, at: datetime, actor: str) -> ErasureRequest:
    return _next(
        request,
        at,
        status=ErasureStatus.ABANDONED,
        actor=actor,
        error=f"abandoned after {request.attempts} attempt(s): {request.error or 'the saga did not finish'}",
    )
