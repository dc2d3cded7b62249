"""The home's background workers as scheduled assets (docs/workers.md): the orphan reconcile of
the retrieval index, the sensitivity sweep, recalibration, entity communities and structured
profiles. Each is idempotent (a second run changes nothing), works on the home opened here or
through the memory service that owns it (``resources.HomeOps``), and has an asset check that asks
the same worker what it would do (``apply=False``) and fails while work is left.

No `from __future__ import annotations` here: Dagster reads resource types from the annotations.
"""

from typing import Any, Callable, Sequence

import dagster as dg

from .resources import EmbedderResource, MemoryHomeResource
from .retrieval import retrieval_index
from .sources import embedder_model
from .timeline import STORE_POOL
from .writers import STORE_WRITERS

GROUP = "workers"


def _metadata(report: dict[str, Any]) -> dict[str, Any]:
    return {k: dg.MetadataValue.json(v) if isinstance(v, (list, dict)) else v for k, v in report.items()}


def _worker(
    name: str,
    op: str,
    description: str,
    check: str,
    check_description: str,
    clear: Callable[[dict[str, Any]], bool],
    *,
    deps: Sequence[Any] = STORE_WRITERS,
    with_embedder: bool = False,
) -> tuple[dg.AssetsDefinition, dg.AssetChecksDefinition]:
    """A worker's asset (``op(apply=True)``) and its check (``op(apply=False)``, passed while
    ``clear(report)``). ``with_embedder``: the worker reads the index, so the home opens with it."""

    def run(context: dg.AssetExecutionContext, home_resource: MemoryHomeResource, embedder) -> None:
        with home_resource.maintenance(embedder=embedder) as home:
            report = getattr(home, op)(apply=True)
        context.log.info(f"{name} on {home.where}: {report}")
        context.add_output_metadata(_metadata(report))

    def look(home_resource: MemoryHomeResource, embedder) -> dg.AssetCheckResult:
        with home_resource.maintenance(read_only=True, embedder=embedder) as home:
            report = getattr(home, op)(apply=False)
        return dg.AssetCheckResult(passed=clear(report), metadata=_metadata(report))

    if with_embedder:

        def materialize(
            context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, embedder: EmbedderResource
        ) -> None:
            run(context, memory_home, embedder)

        def checked(memory_home: MemoryHomeResource, embedder: EmbedderResource) -> dg.AssetCheckResult:
            return look(memory_home, embedder)

    else:

        def materialize(context: dg.AssetExecutionContext, memory_home: MemoryHomeResource) -> None:
            run(context, memory_home, None)

        def checked(memory_home: MemoryHomeResource) -> dg.AssetCheckResult:
            return look(memory_home, None)

    asset = dg.asset(name=name, group_name=GROUP, pool=STORE_POOL, deps=list(deps), description=description)(
        materialize
    )
    return asset, dg.asset_check(asset=asset, name=check, description=check_description)(checked)


# -- orphan_vector_reconcile -------------------------------------------------------------------

orphan_vector_reconcile, no_orphan_index_rows = _worker(
    "orphan_vector_reconcile",
    "reconcile_orphan_vectors",
    "Drop the index rows of facts the store no longer serves (deleted, retired, made high, gone); only the "
    "index changes.",
    "no_orphan_index_rows",
    "No index row serves a fact that is deleted, retired, made high or gone from the store.",
    lambda report: report["orphans"] == 0,
    deps=[retrieval_index],
    with_embedder=True,
)


# -- sensitivity_sweep ---------------------------------------------------------------------------

sensitivity_sweep, sensitivity_labels_match_detection = _worker(
    "sensitivity_sweep",
    "sweep_sensitivity",
    "Give every visible fact stored under a lower sensitivity than detection says a labelled version "
    "(audited); a fact made high leaves the index.",
    "sensitivity_labels_match_detection",
    "No visible fact is stored under a lower sensitivity than detection gives its value.",
    lambda report: report["under_labelled"] == 0,
    with_embedder=True,
)


# -- recalibration -------------------------------------------------------------------------------


def _calibration_metadata(tenants: list[dict[str, Any]]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for t in tenants:
        counts[t["status"]] = counts.get(t["status"], 0) + 1
    return {
        "tenants": len(tenants),
        "written": sum(1 for t in tenants if t.get("written")),
        **{f"status_{k}": v for k, v in sorted(counts.items())},
        "thresholds": dg.MetadataValue.json({t["tenant"]: (t["measured"] or {}).get("threshold") for t in tenants}),
    }


@dg.asset(
    group_name=GROUP,
    pool=STORE_POOL,
    deps=[*STORE_WRITERS, embedder_model],
    description="Measure the embedder's cosines on each tenant's live values and keep the conflict threshold "
    "they give in the tenant's settings (a person's own conflict_threshold still wins).",
)
def recalibration(
    context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, embedder: EmbedderResource
) -> None:
    with memory_home.maintenance(embedder=embedder) as home:
        tenants = home.recalibrate(apply=True)
    context.log.info(f"recalibration on {home.where}: {tenants}")
    context.add_output_metadata(_calibration_metadata(tenants))


@dg.asset_check(
    asset=recalibration,
    description="Every tenant with live values holds a calibration measured under the home's embedder.",
)
def calibration_matches_embedder(memory_home: MemoryHomeResource, embedder: EmbedderResource) -> dg.AssetCheckResult:
    with memory_home.maintenance(read_only=True, embedder=embedder) as home:
        tenants = home.recalibrate(apply=False)
    wrong = [t["tenant"] for t in tenants if t["status"] in ("absent", "other_embedder")]
    metadata = _calibration_metadata(tenants)
    metadata["uncalibrated"] = dg.MetadataValue.json(wrong)
    return dg.AssetCheckResult(passed=not wrong, metadata=metadata)


# -- entity_communities --------------------------------------------------------------------------

entity_communities, communities_match_the_graph = _worker(
    "entity_communities",
    "detect_communities",
    "Louvain communities of each namespace's current entity graph, recomputed only where the graph changed "
    "since the last run.",
    "communities_match_the_graph",
    "Every namespace's communities were computed from its graph as it stands now.",
    lambda report: not report["behind"],
)


# -- structured_profile --------------------------------------------------------------------------

structured_profile, profiles_match_their_sources = _worker(
    "structured_profile",
    "build_profiles",
    "Build each user's structured profile (a profile row held to the namespace's schema) where its sources' "
    "digest or the schema changed since it was built; a current profile is left alone.",
    "profiles_match_their_sources",
    "Every user a profile schema applies to has a profile built from their facts as they stand now, under the "
    "schema as it is now (none stale, none missing).",
    lambda report: not report["behind"],
)


# -- usage_fold ----------------------------------------------------------------------------------

usage_fold, usage_totals_are_current = _worker(
    "usage_fold",
    "fold_usage",
    "Fold what retrieval showed and what callers said of it (searches' exposures, views and contexts, "
    "retrieval feedback) since the last run into per-fact totals, which the hybrid_usage recipe reads.",
    "usage_totals_are_current",
    "Every exposure and every piece of retrieval feedback recorded is folded into the totals.",
    lambda report: report["waiting"] == 0,
)


# -- embedding_worker ----------------------------------------------------------------------------


class EmbeddingWorkerConfig(dg.Config):
    limit: int = 256  # facts written per run
    max_attempts: int = 3  # failures after which a fact is parked (reported; repair_projections still tries it)


@dg.asset(
    group_name=GROUP,
    pool=STORE_POOL,
    deps=[retrieval_index],
    description="Write a bounded batch of the indexable live facts whose index row (vector) is missing or "
    "stale, or whose index write failed; a value the embedder refuses fails alone and is parked after "
    "max_attempts.",
)
def embedding_worker(
    context: dg.AssetExecutionContext,
    config: EmbeddingWorkerConfig,
    memory_home: MemoryHomeResource,
    embedder: EmbedderResource,
) -> None:
    with memory_home.maintenance(embedder=embedder) as home:
        report = home.fill_embeddings(apply=True, limit=config.limit, max_attempts=config.max_attempts)
    context.log.info(f"embedding worker on {home.where}: {report}")
    if report["parked"]:
        context.log.warning(f"{report['parked']} facts are parked after repeated failures: {report['parked_ids']}")
    context.add_output_metadata(_metadata(report))


@dg.asset_check(
    asset=embedding_worker,
    description="Every indexable live fact has an index row of its current version, vector included.",
)
def every_indexable_fact_has_a_vector(
    memory_home: MemoryHomeResource, embedder: EmbedderResource
) -> dg.AssetCheckResult:
    defaults = EmbeddingWorkerConfig()
    with memory_home.maintenance(read_only=True, embedder=embedder) as home:
        report = home.fill_embeddings(apply=False, limit=defaults.limit, max_attempts=defaults.max_attempts)
    return dg.AssetCheckResult(passed=report["missing"] == 0 and report["stale"] == 0, metadata=_metadata(report))


WORKERS = (
    orphan_vector_reconcile,
    sensitivity_sweep,
    recalibration,
    entity_communities,
    structured_profile,
    usage_fold,
    embedding_worker,
)
WORKER_CHECKS = (
    no_orphan_index_rows,
    sensitivity_labels_match_detection,
    calibration_matches_embedder,
    communities_match_the_graph,
    profiles_match_their_sources,
    usage_totals_are_current,
    every_indexable_fact_has_a_vector,
)
