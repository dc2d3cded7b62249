"""The one Dagster ``defs`` of the platform. `dagster dev -m assets.definitions` loads it."""

import dagster as dg

from .documents import guide_documents
from .evals import coref_mcnemar, extraction_observation_recall, locomo_recall, resolver_calibration
from .extraction import extraction_job, extraction_queue_drain, extraction_queue_sensor, nightly_consolidation
from .maintenance import (
    SCHEDULES,
    expiry_sweep,
    expiry_sweep_job,
    index_maintenance,
    index_maintenance_job,
    projection_repair,
    projection_repair_job,
    resolver_job,
    resolver_pass,
)
from .placement import placed_facts, placement_as_constructed, placement_corpus
from .resolver import resolver_demo_statements
from .resources import EmbedderResource, LLMResource, MemoryHomeResource
from .retrieval import index_agrees_with_heads, retrieval_index
from .tenants import tenant_partitions_sensor, tenant_report, tenant_report_job
from .timeline import (
    audit_chain_verifies,
    every_table_classified,
    no_overlapping_live_intervals,
    no_row_across_tenants,
    probes_answer_as_constructed,
    timeline_corpus,
    timeline_memory,
    timeline_summary,
)

ASSETS = [
    timeline_corpus,
    timeline_memory,
    timeline_summary,
    resolver_demo_statements,
    guide_documents,
    placement_corpus,
    placed_facts,
    extraction_queue_drain,
    retrieval_index,
    locomo_recall,
    coref_mcnemar,
    extraction_observation_recall,
    resolver_calibration,
    expiry_sweep,
    index_maintenance,
    resolver_pass,
    projection_repair,
    tenant_report,
]
CHECKS = [
    no_overlapping_live_intervals,
    audit_chain_verifies,
    probes_answer_as_constructed,
    index_agrees_with_heads,
    placement_as_constructed,
    no_row_across_tenants,
    every_table_classified,
]

# Maintenance runs on its schedules, not as a step of the pipeline.
main_job = dg.define_asset_job(
    "main",
    selection=dg.AssetSelection.all()
    - dg.AssetSelection.groups("maintenance")
    - dg.AssetSelection.assets(tenant_report),
    description="The main pipeline, end to end, on the embedded default.",
    executor_def=dg.in_process_executor,
)

defs = dg.Definitions(
    assets=ASSETS,
    asset_checks=CHECKS,
    jobs=[
        main_job,
        expiry_sweep_job,
        index_maintenance_job,
        extraction_job,
        resolver_job,
        projection_repair_job,
        tenant_report_job,
    ],
    schedules=[*SCHEDULES, nightly_consolidation],
    sensors=[extraction_queue_sensor, tenant_partitions_sensor],
    resources={"memory_home": MemoryHomeResource(), "embedder": EmbedderResource(), "llm": LLMResource()},
)
