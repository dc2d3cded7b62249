"""The jobs: the main pipeline, the conversation partitions, and one job per maintenance or worker
asset (run by ``schedules``).

Every job that writes the store runs in process: on the embedded default DuckDB admits one writer.
"""

import dagster as dg

from .compounding import consolidation
from .conversations import conversation_corpus, conversation_extraction
from .dreams import dreams_pass
from .extraction import extraction_queue_drain
from .maintenance import expiry_sweep, index_maintenance, projection_repair, resolver_pass, webhook_delivery
from .reflect import GROUP as REFLECT_GROUP
from .sources import SOURCES
from .tenants import tenant_report
from .workers import (
    embedding_worker,
    entity_communities,
    orphan_vector_reconcile,
    recalibration,
    sensitivity_sweep,
    structured_profile,
    usage_fold,
)


def _job(name: str, asset: dg.AssetsDefinition):
    return dg.define_asset_job(name, selection=[asset], executor_def=dg.in_process_executor)


# Maintenance runs on its schedules, not as a step of the pipeline. The partitioned assets have
# their own jobs: a job of unpartitioned assets runs without a partition key (`make run`).
main_job = dg.define_asset_job(
    "main",
    selection=dg.AssetSelection.all()
    - dg.AssetSelection.groups("maintenance", "workers", REFLECT_GROUP)
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
consolidation_job = dg.define_asset_job(
    "consolidation_job",
    selection=[extraction_queue_drain, consolidation],
    description="Drain the extraction queue, then consolidate every namespace.",
    executor_def=dg.in_process_executor,
)
tenant_report_job = _job("tenant_report_job", tenant_report)
webhook_delivery_job = _job("webhook_delivery_job", webhook_delivery)
orphan_vector_reconcile_job = _job("orphan_vector_reconcile_job", orphan_vector_reconcile)
sensitivity_sweep_job = _job("sensitivity_sweep_job", sensitivity_sweep)
recalibration_job = _job("recalibration_job", recalibration)
entity_communities_job = _job("entity_communities_job", entity_communities)
usage_fold_job = _job("usage_fold_job", usage_fold)
embedding_worker_job = _job("embedding_worker_job", embedding_worker)
structured_profile_job = _job("structured_profile_job", structured_profile)
dreams_job = _job("dreams_job", dreams_pass)

# The reflect pipeline of one tenant (a tenant partition): its five phases in order.
reflect_job = dg.define_asset_job(
    "reflect_job",
    selection=dg.AssetSelection.groups(REFLECT_GROUP),
    description="The reflect pipeline of one tenant: reduce, reflect, reweave, verify, archive (docs/reflect.md).",
    executor_def=dg.in_process_executor,
)

JOBS = (
    main_job,
    observe_sources_job,
    conversations_job,
    expiry_sweep_job,
    index_maintenance_job,
    extraction_job,
    consolidation_job,
    resolver_job,
    projection_repair_job,
    tenant_report_job,
    webhook_delivery_job,
    orphan_vector_reconcile_job,
    sensitivity_sweep_job,
    recalibration_job,
    entity_communities_job,
    usage_fold_job,
    embedding_worker_job,
    structured_profile_job,
    dreams_job,
    reflect_job,
)
