"""Maintenance: the expiry sweep and the index's repair and optimize, each on a schedule.

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
    with memory_home.open(embedder=embedder.build(memory_home.path)) as memory:
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
    with memory_home.open(embedder=embedder.build(memory_home.path)) as memory:
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


expiry_sweep_job = dg.define_asset_job(
    "expiry_sweep_job", selection=[expiry_sweep], executor_def=dg.in_process_executor
)
index_maintenance_job = dg.define_asset_job(
    "index_maintenance_job", selection=[index_maintenance], executor_def=dg.in_process_executor
)
SCHEDULES = [
    dg.ScheduleDefinition(
        name="hourly_expiry_sweep",
        job=expiry_sweep_job,
        cron_schedule="5 * * * *",
        description="Expired facts are hidden at once; the sweep records what becomes of them.",
    ),
    dg.ScheduleDefinition(
        name="nightly_index_maintenance",
        job=index_maintenance_job,
        cron_schedule="30 2 * * *",
        description="Repair failed index writes and optimize the Lance indexes.",
    ),
]


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

    with memory_home.open(embedder=embedder.build(memory_home.path)) as memory:
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


resolver_job = dg.define_asset_job("resolver_job", selection=[resolver_pass], executor_def=dg.in_process_executor)


@dg.asset(
    group_name="maintenance",
    pool=STORE_POOL,
    description="Replay the index writes that failed (a failed projection never failed its write).",
)
def projection_repair(
    context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, embedder: EmbedderResource
) -> None:
    with memory_home.open(embedder=embedder.build(memory_home.path)) as memory:
        waiting = len(memory.store.projections.pending_projection_failures())
        repaired = memory.repair_projections()
    context.add_output_metadata({"waiting": waiting, "repaired": repaired})


projection_repair_job = dg.define_asset_job(
    "projection_repair_job", selection=[projection_repair], executor_def=dg.in_process_executor
)
SCHEDULES.append(
    dg.ScheduleDefinition(
        name="resolver_every_15_minutes",
        job=resolver_job,
        cron_schedule="*/15 * * * *",
        description="Judge statements written since the last pass against their peers (offline by default).",
    )
)
SCHEDULES.append(
    dg.ScheduleDefinition(
        name="projection_repair_every_30_minutes",
        job=projection_repair_job,
        cron_schedule="20,50 * * * *",
        description="Replay failed index writes.",
    )
)
