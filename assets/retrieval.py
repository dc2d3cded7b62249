"""Retrieval: the Lance index over the memory home, and the check that it agrees with the store."""

import dagster as dg

from .resources import EmbedderResource, MemoryHomeResource
from .sources import embedder_model
from .timeline import STORE_POOL
from .writers import STORE_WRITERS


@dg.asset(
    group_name="retrieval",
    pool=STORE_POOL,
    deps=[*STORE_WRITERS, embedder_model],  # reindex rebuilds from every latest state of the store
    code_version="1",
    # Rebuilt once every writer has materialized and after any of them (or the embedder) changes,
    # when the pipeline's automation sensor is on (``schedules.pipeline_automation``).
    automation_condition=dg.AutomationCondition.eager(),
    description="The Lance retrieval index (vectors + BM25) rebuilt from the authoritative store.",
)
def retrieval_index(
    context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, embedder: EmbedderResource
) -> None:
    with memory_home.open(embedder=embedder) as memory:
        rows = memory.reindex(progress=lambda n, total: context.log.info(f"indexed {n}/{total} facts"))
        stats = memory.projector.optimize()
        context.add_output_metadata(
            {
                "rows": rows,
                # The store's state the index was built at: its newest version row.
                "store_seq": memory.store.versions.last_seq,
                "embedder": memory.embedder.name,
                "dim": memory.embedder.dim,
                "unindexed_rows": stats.get("unindexed_rows", 0),
            }
        )


@dg.asset_check(
    asset=retrieval_index,
    blocking=True,
    description="Fact by fact: every indexable latest state has exactly one row of its version and content, "
    "and no row serves a fact the store does not serve.",
)
def index_agrees_with_heads(memory_home: MemoryHomeResource, embedder: EmbedderResource) -> dg.AssetCheckResult:
    with memory_home.open(read_only=True, embedder=embedder) as memory:
        report = memory.projector.consistency()
    return dg.AssetCheckResult(
        passed=report.ok,
        metadata={
            k: dg.MetadataValue.json(v) if isinstance(v, list) else v for k, v in report.to_dict(examples=20).items()
        },
    )
