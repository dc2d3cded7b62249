"""Maintenance: the expiry sweep, the index's repair and optimize, the conflict resolver's pass;
each is run by its own job on a schedule (``jobs``, ``schedules``).

No `from __future__ import annotations` here: Dagster reads resource types from the annotations.
"""

import dagster as dg

from .resources import EmbedderResource, LLMResource, MemoryHomeResource
from .timeline import STORE_POOL


@dg.asset(
    group_name="maintenance",
    pool=STORE_POOL,
    description="Apply on_expire (tombstone, demote, anonymize) to every fact past its expires_at.",
)
def expiry_sweep(
    context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, embedder: EmbedderResource
) -> None:
    with memory_home.open(embedder=embedder) as memory:
        counts = memory.sweep_expired()
    context.log.info(f"expiry sweep: {counts}")
    context.add_output_metadata({name: dg.MetadataValue.int(n) for name, n in counts.items()})


@dg.asset(
    group_name="maintenance",
    pool=STORE_POOL,
    description="Replay failed index writes, then fold appended rows into the vector and text indexes.",
)
def index_maintenance(
    context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, embedder: EmbedderResource
) -> None:
    with memory_home.open(embedder=embedder) as memory:
        caught_up = memory.flush()
        repaired = memory.repair_projections()
        stats = memory.projector.optimize()
    context.add_output_metadata(
        {
            "caught_up": caught_up,
            "repaired": repaired,
            "rows": stats.get("rows", 0),
            "unindexed_rows": stats.get("unindexed_rows", 0),
        }
    )


class ResolverPassConfig(dg.Config):
    floor: float = 0.60  # the resolver floor for the default embedders; the test-only hashing one needs less
    batch: int = 40


@dg.asset(
    group_name="maintenance",
    pool=STORE_POOL,
    description="One conflict-resolver pass: mark new statements, judge the owed ones (offline rule judge), "
    "retire, flag or clear, each recorded and undoable.",
)
def resolver_pass(
    context: dg.AssetExecutionContext,
    config: ResolverPassConfig,
    memory_home: MemoryHomeResource,
    embedder: EmbedderResource,
    llm: LLMResource,
) -> None:
    from memory_core.resolver.actions import ResolverSettings

    with memory_home.open(embedder=embedder) as memory:
        report = memory.resolve(llm.judge(), settings=ResolverSettings(floor=config.floor, batch=config.batch))
        marks = memory.store.ledger.mark_counts()
    context.log.info(f"resolver pass: {report.to_dict()}")
    context.add_output_metadata(
        {
            "judged": report.judged,
            "errored": report.errored,
            "capped": report.capped,
            "left_owed": report.left_owed,
            "stopped": report.stopped or "",
            **{f"action_{k}": v for k, v in report.actions.items()},
            **{f"marked_{k}": v for k, v in report.marked.items()},
            "marks": dg.MetadataValue.json(marks),
        }
    )


@dg.asset(
    group_name="maintenance",
    pool=STORE_POOL,
    description="Replay the index writes that failed (a failed projection never failed its write).",
)
def projection_repair(
    context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, embedder: EmbedderResource
) -> None:
    with memory_home.open(embedder=embedder) as memory:
        waiting = len(memory.store.projections.pending_projection_failures())
        repaired = memory.repair_projections()
    context.add_output_metadata({"waiting": waiting, "repaired": repaired})
