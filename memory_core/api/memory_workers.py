"""Memory's background workers beyond the expiry sweep (docs/workers.md): the orphan reconcile of
the retrieval index, the sensitivity sweep, recalibration, entity communities, the usage fold
and the embedding worker. Plain
functions, bound as ``Memory``'s methods; each is idempotent (a second run changes nothing), and
``apply=False`` reports what a run would do without writing (what the Dagster checks read)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..identity import Identity
from ..services.communities import CommunityService
from ..services.embeddings import EmbeddingWorker
from ..services.orphans import OrphanReconciler
from ..services.recalibration import RecalibrationService
from ..services.sensitivity_sweep import SensitivitySweep
from ..services.tenant_settings import TenantSettingsService
from ..services.usage import UsageFold

if TYPE_CHECKING:
    from .memory import Memory

# Who a recalibrated setting is attributed to in the audit log (an agent of the tenant: the
# settings op records its identity's actor, ``agent:recalibration``).
RECALIBRATION_AGENT = "recalibration"


def reconcile_orphan_vectors(self: Memory, *, apply: bool = True) -> dict[str, Any]:
    """Drop the retrieval index's rows of facts the store no longer serves (deleted, retired,
    made high, or gone). Only the index changes. Counts by reason, and the first fact ids."""
    return OrphanReconciler(self.session).run(apply=apply)


def sweep_sensitivity(self: Memory, *, apply: bool = True, actor: str = "worker:sensitivity-sweep") -> dict[str, Any]:
    """Give every visible fact stored under a lower sensitivity than detection says a labelled
    version (audited); a fact made high leaves the index. Counts, and the first fact ids."""
    return SensitivitySweep(self.session).run(apply=apply, actor=actor)


def recalibrate(self: Memory, *, apply: bool = True) -> list[dict[str, Any]]:
    """Measure the embedder's cosines on each tenant's live values and keep the conflict
    threshold they give in the tenant's settings (``calibrated_threshold``, with the embedder
    in ``calibrated_embedder``), through the tenant settings op. A person's own
    ``conflict_threshold`` is left alone and still wins. One entry per tenant, ``written`` True
    where this run changed it."""
    plans = RecalibrationService(self.session).plan()
    out = []
    for plan in plans:
        written = False
        if apply and plan.due and plan.measured is not None:
            self.session.refuse_read_only("recalibration writes the tenants' settings")
            admin = Identity(tenant=plan.tenant, agent=RECALIBRATION_AGENT, admin=True)
            TenantSettingsService(self.session, admin, "worker:recalibration").configure(
                calibrated_threshold=plan.measured.threshold, calibrated_embedder=plan.embedder
            )
            written = True
        out.append({**plan.to_dict(), "written": written})
    return out


def detect_communities(self: Memory, *, apply: bool = True) -> dict[str, Any]:
    """Louvain communities of each namespace's current entity graph, kept one row per namespace
    (``entity_communities``); a namespace whose graph has not changed since is left as it is.
    Needs networkx (the platform extra). Counts by status, and the namespaces that were behind."""
    return CommunityService(self.session).run(apply=apply)


def fold_usage(self: Memory, *, apply: bool = True) -> dict[str, Any]:
    """Fold what retrieval showed and what callers said of it since the last fold into per-fact
    totals (exposures, recalls, negative feedback), which a recipe's ``usage_prior`` reads
    (``hybrid_usage``). Searches' exposures, views and contexts, retrieval feedback. Counts."""
    return UsageFold(self.session).run(apply=apply)


def fill_embeddings(self: Memory, *, apply: bool = True, limit: int = 256, max_attempts: int = 3) -> dict[str, Any]:
    """Write up to ``limit`` indexable live facts whose index row (vector) is missing or stale, or
    whose index write failed; one the embedder refuses fails alone, and after ``max_attempts``
    failures it is parked (``repair_projections`` still tries it). Counts, and the first ids."""
    return EmbeddingWorker(self.session).run(apply=apply, limit=limit, max_attempts=max_attempts)
