"""When the jobs run: the schedules, and the sensors that launch a job when the store has work.

No `from __future__ import annotations` here: Dagster reads resource types from the annotations.
"""

import dagster as dg

from .jobs import (
    consolidation_job,
    dreams_job,
    embedding_worker_job,
    entity_communities_job,
    expiry_sweep_job,
    extraction_job,
    index_maintenance_job,
    orphan_vector_reconcile_job,
    projection_repair_job,
    recalibration_job,
    reflect_job,
    resolver_job,
    sensitivity_sweep_job,
    structured_profile_job,
    tenant_report_job,
    usage_fold_job,
    webhook_delivery_job,
)
from .resources import MemoryHomeResource
from .retrieval import retrieval_index
from .tenants import tenants

# Declarative automation where Dagster does the job: the index follows the tables (eager). Off
# until turned on in the UI, like the sensors below: on the embedded default one writer at a time.
pipeline_automation = dg.AutomationConditionSensorDefinition(
    "pipeline_automation",
    target=dg.AssetSelection.assets(retrieval_index),
    description="Rebuilds the retrieval index after the tables it is built from change (its eager condition).",
)


@dg.schedule(
    job=reflect_job,
    cron_schedule="40 * * * *",
    description="Digest what each tenant captured, said and decided since the last run (one run per tenant "
    "partition; the tenant sensor registers them).",
)
def hourly_reflect(context: dg.ScheduleEvaluationContext):
    known = context.instance.get_dynamic_partitions(tenants.name)
    if not known:
        return dg.SkipReason("no tenant partition yet: the tenant sensor registers them")
    return [dg.RunRequest(partition_key=tenant) for tenant in known]


SCHEDULES = (
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
    dg.ScheduleDefinition(
        name="resolver_every_15_minutes",
        job=resolver_job,
        cron_schedule="*/15 * * * *",
        description="Judge statements written since the last pass against their peers (offline by default).",
    ),
    dg.ScheduleDefinition(
        name="projection_repair_every_30_minutes",
        job=projection_repair_job,
        cron_schedule="20,50 * * * *",
        description="Replay failed index writes.",
    ),
    dg.ScheduleDefinition(
        name="nightly_consolidation",
        job=consolidation_job,
        cron_schedule="15 3 * * *",
        description="Consolidate what the day banked (harvested spans, queued extractions left due), then "
        "merge each namespace's similar facts into summaries.",
    ),
    dg.ScheduleDefinition(
        name="nightly_orphan_vector_reconcile",
        job=orphan_vector_reconcile_job,
        cron_schedule="45 2 * * *",
        description="Drop index rows of facts the store no longer serves (after the index maintenance).",
    ),
    dg.ScheduleDefinition(
        name="hourly_sensitivity_sweep",
        job=sensitivity_sweep_job,
        cron_schedule="35 * * * *",
        description="Relabel facts stored under a lower sensitivity than detection says.",
    ),
    dg.ScheduleDefinition(
        name="weekly_recalibration",
        job=recalibration_job,
        cron_schedule="0 4 * * 0",
        description="Measure the embedder's cosines on the home's facts; keep each tenant's conflict threshold.",
    ),
    dg.ScheduleDefinition(
        name="nightly_entity_communities",
        job=entity_communities_job,
        cron_schedule="0 5 * * *",
        description="Recompute entity communities where the graph changed since the last run.",
    ),
    dg.ScheduleDefinition(
        name="hourly_structured_profile",
        job=structured_profile_job,
        cron_schedule="50 * * * *",
        description="Rebuild the structured profiles whose sources or schema changed since they were built.",
    ),
    dg.ScheduleDefinition(
        name="hourly_usage_fold",
        job=usage_fold_job,
        cron_schedule="25 * * * *",
        description="Fold the hour's exposures and retrieval feedback into per-fact usage totals.",
    ),
    dg.ScheduleDefinition(
        name="embedding_worker_every_30_minutes",
        job=embedding_worker_job,
        cron_schedule="10,40 * * * *",
        description="Write a bounded batch of the facts whose vector is missing or stale (failures fail alone).",
    ),
    dg.ScheduleDefinition(
        name="nightly_dreams",
        job=dreams_job,
        cron_schedule="30 4 * * *",
        description="Dreams: after the night's consolidation, queue proposals (merge, retire, age out, procedure) "
        "from each namespace's last week for a reviewer; memory changes only when one is approved.",
    ),
    hourly_reflect,
)


@dg.sensor(
    job=extraction_job,
    minimum_interval_seconds=30,
    description="Launches the queue drain when jobs were queued since the last look (cursor: the newest job).",
)
def extraction_queue_sensor(context: dg.SensorEvaluationContext, memory_home: MemoryHomeResource):
    seen = memory_home.peek(lambda home: home.queue_state())
    if isinstance(seen, dg.SkipReason):
        return seen
    cursor, backlog = seen
    due = sum(n for k, n in backlog.items() if k.endswith(":pending"))
    if not cursor or (cursor == context.cursor and not due):
        return dg.SkipReason("no new extraction work")
    context.update_cursor(cursor)
    return dg.RunRequest(run_key=f"extraction-{cursor}", tags={"queue_backlog": str(due)})


@dg.sensor(
    job=tenant_report_job,
    minimum_interval_seconds=60,
    description="Registers every tenant of the store as a partition and asks for its report once.",
)
def tenant_partitions_sensor(context: dg.SensorEvaluationContext, memory_home: MemoryHomeResource):
    found = memory_home.peek(lambda home: home.tenants())
    if isinstance(found, dg.SkipReason):
        return found
    known = set(context.instance.get_dynamic_partitions("tenants"))
    new = [t for t in found if t not in known]
    if not new:
        return dg.SkipReason("no new tenant")
    return dg.SensorResult(
        run_requests=[dg.RunRequest(partition_key=t, run_key=f"tenant-{t}") for t in new],
        dynamic_partitions_requests=[tenants.build_add_request(new)],
    )


@dg.sensor(
    job=webhook_delivery_job,
    minimum_interval_seconds=30,
    description="Launches a webhook delivery pass while the outbox holds events due (none while a service delivers).",
)
def webhook_delivery_sensor(context: dg.SensorEvaluationContext, memory_home: MemoryHomeResource):
    due = memory_home.peek(lambda home: home.webhook_backlog())
    if isinstance(due, dg.SkipReason):
        return due
    if not due:
        return dg.SkipReason("no webhook event is due")
    return dg.RunRequest(tags={"webhook_events_due": str(due)})
