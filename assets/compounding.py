"""Memory that compounds: consolidation, run nightly after the extraction queue is drained
(``nightly_consolidation``), over every user and agent namespace of the home.

No `from __future__ import annotations` here: Dagster reads config and resource types from
the live annotations.
"""

import dagster as dg

from .extraction import extraction_queue_drain
from .resources import EmbedderResource, LLMResource, MemoryHomeResource
from .timeline import STORE_POOL
from .writers import STORE_WRITERS


class ConsolidationConfig(dg.Config):
    tenant: str = ""  # empty: every tenant of the home
    min_cosine: float = 0.85


@dg.asset(
    group_name="maintenance",
    pool=STORE_POOL,
    deps=[*STORE_WRITERS, extraction_queue_drain],
    description="Merge clusters of similar live facts of every user and agent namespace into one summary "
    "each (offline rule merger unless the llm resource names a model); lineage kept, each run undoable.",
)
def consolidation(
    context: dg.AssetExecutionContext,
    config: ConsolidationConfig,
    memory_home: MemoryHomeResource,
    embedder: EmbedderResource,
    llm: LLMResource,
) -> dg.MaterializeResult:
    with memory_home.open(embedder=embedder) as memory:
        runs = memory.consolidate_all(tenant=config.tenant or None, merger=llm.merger(), min_cosine=config.min_cosine)
    outcomes: dict[str, int] = {}
    for run in runs:
        for cluster in run.clusters:
            outcomes[cluster.outcome] = outcomes.get(cluster.outcome, 0) + 1
    before, after = sum(r.live_before for r in runs), sum(r.live_after for r in runs)
    context.log.info(f"consolidation: {len(runs)} namespace(s), live rows {before} -> {after}, {outcomes}")
    return dg.MaterializeResult(
        metadata={
            "namespaces": len(runs),
            "live_rows_before": before,
            "live_rows_after": after,
            "clusters": dg.MetadataValue.json(outcomes),
            "runs": dg.MetadataValue.json([r.run_id for r in runs if r.clusters]),
        }
    )
