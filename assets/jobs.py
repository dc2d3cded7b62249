"""The jobs: the main pipeline, the conversation partitions, and one job per maintenance or worker
asset (run by ``schedules``).

Every job that writes the store runs in process: on the embedded default DuckDB admits one writer.
"""

import dagster as dg

from .conversations import conversation_corpus, conversation_extraction
from .extraction import extraction_queue_drain
from .maintenance import expiry_sweep, index_maintenance, projection_repair, resolver_pass, webhook_delivery
from .sources import SOURCES
from .tenants import tenant_report


def _job(name: str, asset: dg.AssetsDefinition):
    return dg.define_asset_job(name, selection=[asset], executor_def=dg.in_process_executor)


# Maintenance runs on its schedules, not as a step of the pipeline. The partitioned assets have
# their own jobs: a job of unpartitioned assets runs without a partition key (`make run`).
main_job = dg.define_asset_job(
    "main",
    selection=dg.AssetSelection.all()
    - dg.AssetSelection.groups("maintenance")
    - dg.AssetSelection.assets(tenant_report, conversation_corpus, conversation_extraction),
    description="The main pipeline, end to end, on the embedded default.",
    executor_def=dg.in_process_executor,
)
conversations_job = dg.define_asset_job(
    "conversations_job",
    selection=[conversation_corpus, conversation_extraction],
    description="The conversation partitions: each chat, then the facts extracted from it (a range is one run).",
    executor_def=dg.in_process_executor,
)
observe_sources_job = dg.define_asset_job(
    "observe_sources",
    selection=dg.AssetSelection.assets(*(source.key for source in SOURCES)),
    description="Observe what the pipeline reads but does not make (the home, the embedder, the queue, "
    "the public corpora): a changed source turns its downstream stale.",
    executor_def=dg.in_process_executor,
)
expiry_sweep_job = _job("expiry_sweep_job", expiry_sweep)
index_maintenance_job = _job("index_maintenance_job", index_maintenance)
resolver_job = _job("resolver_job", resolver_pass)
projection_repair_job = _job("projection_repair_job", projection_repair)
extraction_job = _job("extraction_job", extraction_queue_drain)
tenant_report_job = _job("tenant_report_job", tenant_report)
webhook_delivery_job = _job("webhook_delivery_job", webhook_delivery)

JOBS = (
    main_job,
    observe_sources_job,
    conversations_job,
    expiry_sweep_job,
    index_maintenance_job,
    extraction_job,
    resolver_job,
    projection_repair_job,
    tenant_report_job,
    webhook_delivery_job,
)
