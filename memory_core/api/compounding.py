"""The Memory tool's consolidation ops (``MemoryTool`` lists each in its class body), and the
operator's pass over every namespace of a home (``Memory.consolidate_all``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from ..consolidation import ConsolidationRun, ConsolidationSettings, Merger, RuleMerger
from ..identity import Identity, Scope
from ..services.consolidation import ConsolidationService
from ..session.holds import held

if TYPE_CHECKING:
    from .memory import Memory
    from .tool import MemoryTool


def consolidate(
    self,
    *,
    scope: str | Scope = Scope.USER,
    merger: Merger | None = None,
    min_cosine: float | None = None,
    max_cluster: int | None = None,
    dry_run: bool = False,
) -> ConsolidationRun:
    """Merge clusters of similar live facts of the scope into one summary each (``docs/consolidation.md``):
    the merged rows are retired behind it, with lineage, and ``consolidation_undo`` reverses a run.
    Never a high, pinned, locked, flagged or redacted row; a suppression never merges with a
    positive. ``merger``: offline rules by default. ``dry_run``: the clusters, nothing written."""
    return self._bound(ConsolidationService).consolidate(
        scope=scope, merger=merger or RuleMerger(), settings=_settings(min_cosine, max_cluster), dry_run=dry_run
    )


def consolidation_undo(self, run_id: str, *, scope: str | Scope = Scope.USER) -> dict[str, Any]:
    """Undo a consolidation run: each summary retired, each merged row as it was before the merge
    (a row changed since is left as it is and listed)."""
    return self._bound(ConsolidationService).undo(run_id, scope=scope)


def consolidation_runs(self, *, scope: str | Scope = Scope.USER) -> list[ConsolidationRun]:
    """The scope's consolidation runs, oldest first, each with every cluster's outcome."""
    return self._bound(ConsolidationService).runs(scope=scope)


def lineage(self, key: str, *, scope: str | Scope = Scope.USER) -> list[dict[str, Any]]:
    """The rows the facts of ``key`` were derived from, and the facts derived from them."""
    return self._bound(ConsolidationService).lineage(key, scope=scope)


def _settings(min_cosine: float | None, max_cluster: int | None) -> ConsolidationSettings:
    base = ConsolidationSettings()
    cosine = base.min_cosine if min_cosine is None else min_cosine
    return ConsolidationSettings(
        min_cosine=cosine,
        strong_cosine=max(cosine, base.strong_cosine),
        max_cluster=base.max_cluster if max_cluster is None else max_cluster,
    )


def consolidate_all(
    self: Memory,
    *,
    tenant: str | None = None,
    merger: Merger | None = None,
    actor: str = "worker:consolidation",
    min_cosine: float | None = None,
) -> list[ConsolidationRun]:
    """One consolidation run over every user and agent namespace (of ``tenant``): what the
    scheduled job runs. A namespace an erasure holds is skipped."""
    return [
        tool.consolidate(scope=scope, merger=merger, min_cosine=min_cosine)
        for scope, tool in worker_tools(self, tenant, actor, "memory.consolidate")
    ]


def worker_tools(memory: Memory, tenant: str | None, agent: str, origin: str) -> Iterator[tuple[str, MemoryTool]]:
    """A worker's tool in each user and agent namespace of ``tenant`` (None: every tenant), as
    ``agent`` in a user's; a namespace an erasure holds is left out. Tenant-wide rows are
    everyone's: no worker acts on them unasked."""
    store = memory.session.store
    for name in [tenant] if tenant is not None else store.inspection.tenants():
        for scope, owner in store.erasure.namespaces(name):
            if scope == "user":
                identity = Identity(tenant=name, user=owner, agent=agent)
            elif scope == "agent":
                identity = Identity(tenant=name, agent=owner)
            else:
                continue
            if not held(store, identity.namespace(scope)):
                yield scope, memory.for_run(identity, origin=origin)
