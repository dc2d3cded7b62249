"""The Memory tool's Dreams ops (``MemoryTool`` lists each in its class body), and the operator's
pass over every namespace of a home (``Memory.dream_all``, what the nightly asset runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..consolidation import ConsolidationSettings
from ..dreams import ACTOR, ORIGIN, DreamPass, DreamProposal, DreamSettings
from ..errors import InvalidInput
from ..identity import Scope
from ..services.dreams import DreamsService
from .compounding import worker_tools

if TYPE_CHECKING:
    from .memory import Memory


def dream(
    self,
    *,
    scope: str | Scope = Scope.USER,
    window_days: int = 7,
    stale_days: int = 90,
    min_cosine: float | None = None,
) -> DreamPass:
    """One Dreams pass over the scope (``docs/dreams.md``): read the last ``window_days`` of events,
    decision outcomes and recalls and the live facts, and queue proposals (merge near-duplicates,
    retire the older of a flagged pair, age out facts untouched for ``stale_days``, a procedure
    note where one intent keeps failing). Memory is not changed: a proposal waits for
    ``dream_approve``. Each is an ``escalate`` decision by worker:dreams; nothing new: a ``no_op``."""
    return self._bound(DreamsService).run_pass(scope=scope, settings=_settings(window_days, stale_days, min_cosine))


def dream_proposals(self, *, scope: str | Scope = Scope.USER, status: str = "pending") -> list[DreamProposal]:
    """The scope's Dreams proposals of ``status`` (pending, applied, rejected, stale, or all), each
    with its targets as read, the change, the rationale and a confidence."""
    return self._bound(DreamsService).proposals(scope=scope, status=status)


def dream_approve(self, proposal_id: str, *, scope: str | Scope = Scope.USER) -> DreamProposal:
    """Apply a pending proposal as normal, audited writes whose provenance names it. A target
    changed since the pass read it: refused (PRECONDITION_FAILED), the proposal goes stale."""
    return self._bound(DreamsService).approve(proposal_id, scope=scope)


def dream_reject(self, proposal_id: str, *, scope: str | Scope = Scope.USER, note: str | None = None) -> DreamProposal:
    """Turn a pending proposal down (who, and ``note``: why); it is not proposed again while its
    targets stay as they are."""
    return self._bound(DreamsService).reject(proposal_id, scope=scope, note=note)


def _settings(window_days: int, stale_days: int, min_cosine: float | None) -> DreamSettings:
    base = ConsolidationSettings()
    cosine = base.min_cosine if min_cosine is None else min_cosine
    try:
        merge = ConsolidationSettings(min_cosine=cosine, strong_cosine=max(cosine, base.strong_cosine))
        return DreamSettings(window_days=window_days, stale_days=stale_days, merge=merge)
    except ValueError as exc:  # a cosine of 0 passes the boundary's unit check, not the clustering's
        raise InvalidInput(str(exc), field="min_cosine") from None


def dream_all(
    self: Memory,
    *,
    tenant: str | None = None,
    window_days: int = 7,
    stale_days: int = 90,
    min_cosine: float | None = None,
) -> list[DreamPass]:
    """One Dreams pass over every user and agent namespace (of ``tenant``): what the nightly job
    runs. Proposals only; a namespace an erasure holds is skipped."""
    return [
        tool.dream(scope=scope, window_days=window_days, stale_days=stale_days, min_cosine=min_cosine)
        for scope, tool in worker_tools(self, tenant, ACTOR, ORIGIN)
    ]
