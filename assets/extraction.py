"""The extraction group: the deferred extraction and harvest queue, drained by a worker asset that
a cursor-based sensor launches whenever new work is queued (``schedules``).

No `from __future__ import annotations` here: Dagster reads config and resource types from
the live annotations.
"""

import dagster as dg

from .resources import EmbedderResource, LLMResource, MemoryHomeResource
from .sources import extraction_queue, memory_home_source
from .timeline import STORE_POOL


class DrainConfig(dg.Config):
    batches: int = 20  # leases taken per run, each of up to `limit` jobs
    limit: int = 8
    lease_s: float = 300.0


@dg.asset(
    group_name="extraction",
    pool=STORE_POOL,
    deps=[extraction_queue, memory_home_source],
    code_version="1",
    description="Run queued extraction and harvest jobs (set_from_messages and the consolidator) until "
    "none is due; a job whose worker died is taken again once its lease runs out.",
)
def extraction_queue_drain(
    context: dg.AssetExecutionContext,
    config: DrainConfig,
    memory_home: MemoryHomeResource,
    embedder: EmbedderResource,
    llm: LLMResource,
) -> dg.MaterializeResult:
    totals = {"claimed": 0, "done": 0, "failed": 0, "waiting": 0, "lease_lost": 0}
    with memory_home.open(embedder=embedder) as memory:
        memory.extractor = llm.extractor()
        for _ in range(config.batches):
            counts = memory.run_extraction_queue(
                worker=f"dagster-{context.run.run_id[:8]}", limit=config.limit, lease_s=config.lease_s
            )
            for name, n in counts.items():
                totals[name] += n
            if counts["claimed"] == 0:
                break
        backlog = memory.store.queue.queue_backlog()
    context.log.info(f"extraction queue: {totals}; backlog {backlog}")
    return dg.MaterializeResult(metadata={**totals, "backlog": dg.MetadataValue.json(backlog)})
