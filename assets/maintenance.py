"""Maintenance: the expiry sweep, the index's repair and optimize, the conflict resolver's pass,
a change-webhook delivery pass;
each is run by its own job on a schedule (``jobs``, ``schedules``). Each works on the home opened
here or, when the resource names a ``url``, through the memory service that owns it: the same
calls (``resources.HomeOps``), the same metadata. Each sits downstream of what it maintains (the
store's writers, or the index): lineage, since a schedule runs it, not an upstream change.

No `from __future__ import annotations` here: Dagster reads resource types from the annotations.
"""

import dagster as dg

from .resources import EmbedderResource, LLMResource, MemoryHomeResource
from .retrieval import retrieval_index
from .timeline import STORE_POOL
from .writers import STORE_WRITERS


@dg.asset(
    group_name="maintenance",
    pool=STORE_POOL,
    deps=list(STORE_WRITERS),
    description="Apply on_expire (tombstone, demote, anonymize) to every fact past its expires_at.",
)
def expiry_sweep(
    context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, embedder: EmbedderResource
) -> None:
    with memory_home.maintenance(embedder=embedder) as home:
        counts = home.sweep_expired()
    context.log.info(f"expiry sweep on {home.where}: {counts}")
    context.add_output_metadata({name: dg.MetadataValue.int(n) for name, n in counts.items()})


@dg.asset(
    group_name="maintenance",
    pool=STORE_POOL,
    deps=[retrieval_index],
    description="Replay failed index writes, then fold appended rows into the vector and text indexes.",
)
def index_maintenance(
    context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, embedder: EmbedderResource
) -> None:
    with memory_home.maintenance(embedder=embedder) as home:
        caught_up = home.flush()
        repaired = home.repair_projections()
        stats = home.optimize_index()
    context.log.info(f"index maintenance on {home.where}: {stats}")
    context.add_output_metadata(
        {
            "caught_up": caught_up,
            "repaired": repaired,
            "rows": stats.get("rows", 0),
            "unindexed_rows": stats.get("unindexed_rows", 0),
        }
    )


@dg.asset(
    group_name="maintenance",
    pool=STORE_POOL,
    deps=list(STORE_WRITERS),
    description="One bounded delivery pass over the change webhooks' outbox (docs/webhooks.md).",
)
def webhook_delivery(context: dg.AssetExecutionContext, memory_home: MemoryHomeResource) -> None:
    with memory_home.maintenance() as home:
        counts = home.deliver_webhooks()
    context.log.info(f"webhook delivery on {home.where}: {counts}")
    context.add_output_metadata({name: dg.MetadataValue.int(n) for name, n in counts.items()})


class ResolverPassConfig(dg.Config):
    floor: float = 0.60  # the resolver floor for the default embedders; the test-only hashing one needs less
    batch: int = 40


@dg.asset(
    group_name="maintenance",
    pool=STORE_POOL,
    deps=list(STORE_WRITERS),
    description="One conflict-resolver pass: mark new statements, judge the owed ones (offline rule judge), "
    "retire, flag or clear, each recorded and undoable. Through a memory service the service's rule judge "
    "judges; an LLM judge configured here is then an error.",
)
def resolver_pass(
    context: dg.AssetExecutionContext,
    config: ResolverPassConfig,
    memory_home: MemoryHomeResource,
    embedder: EmbedderResource,
    llm: LLMResource,
) -> None:
    with memory_home.maintenance(embedder=embedder) as home:
        report = home.resolve(llm, floor=config.floor, batch=config.batch)
        marks = home.mark_counts()
    context.log.info(f"resolver pass on {home.where}: {report.to_dict()}")
    if report.notice:  # once per change of the stop, not every pass it lasts
        context.log.warning(report.notice)
    context.add_output_metadata(
        {
            "judged": report.judged,
            "errored": report.errored,
            "capped": report.capped,
            "left_owed": report.left_owed,
            "dropped": report.dropped,
            "paused": report.paused,
            "stopped": report.stopped or "",
            **{f"action_{k}": v for k, v in report.actions.items()},
            **{f"marked_{k}": v for k, v in report.marked.items()},
            "marks": dg.MetadataValue.json(marks),
        }
    )


@dg.asset(
    group_name="maintenance",
    pool=STORE_POOL,
    deps=[retrieval_index],
    description="Replay the index writes that failed (a failed projection never failed its write).",
)
def projection_repair(
    context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, embedder: EmbedderResource
) -> None:
    with memory_home.maintenance(embedder=embedder) as home:
        waiting = home.pending_repairs()
        repaired = home.repair_projections()
    context.add_output_metadata({"waiting": waiting, "repaired": repaired})
