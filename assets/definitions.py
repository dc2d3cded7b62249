"""The one Dagster ``defs`` of the platform. `dagster dev -m assets.definitions` loads it."""

import dagster as dg

from memory_core.environment import resolve_service

from .celery import CELERY_JOBS
from .compounding import consolidation
from .conversations import conversation_corpus, conversation_extraction
from .documents import guide_documents
from .dreams import dreams_pass
from .evals import coref_mcnemar, extraction_observation_recall, locomo_recall, resolver_calibration
from .extraction import extraction_queue_drain
from .jobs import JOBS
from .maintenance import expiry_sweep, index_maintenance, projection_repair, resolver_pass, webhook_delivery
from .placement import placed_facts, placement_as_constructed, placement_corpus
from .reflect import REFLECT
from .resolver import resolver_demo_statements, resolver_pairs_corpus
from .resources import EmbedderResource, LLMResource, MemoryHomeResource
from .retrieval import index_agrees_with_heads, retrieval_index
from .schedules import (
    SCHEDULES,
    extraction_queue_sensor,
    pipeline_automation,
    tenant_partitions_sensor,
    webhook_delivery_sensor,
)
from .sources import SOURCES
from .tenants import tenant_report
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
from .workers import WORKER_CHECKS, WORKERS

ASSETS = [
    *SOURCES,
    timeline_corpus,
    timeline_memory,
    timeline_summary,
    resolver_pairs_corpus,
    resolver_demo_statements,
    guide_documents,
    placement_corpus,
    placed_facts,
    conversation_corpus,
    conversation_extraction,
    extraction_queue_drain,
    consolidation,
    dreams_pass,
    retrieval_index,
    locomo_recall,
    coref_mcnemar,
    extraction_observation_recall,
    resolver_calibration,
    expiry_sweep,
    index_maintenance,
    resolver_pass,
    projection_repair,
    webhook_delivery,
    tenant_report,
    *WORKERS,
    *REFLECT,
]
CHECKS = [
    no_overlapping_live_intervals,
    audit_chain_verifies,
    probes_answer_as_constructed,
    index_agrees_with_heads,
    placement_as_constructed,
    no_row_across_tenants,
    every_table_classified,
    *WORKER_CHECKS,
]

defs = dg.Definitions(
    assets=ASSETS,
    asset_checks=CHECKS,
    jobs=[*JOBS, *CELERY_JOBS],  # the Celery jobs: the scale-out path (docs/scaling_dagster.md)
    schedules=list(SCHEDULES),
    sensors=[extraction_queue_sensor, tenant_partitions_sensor, pipeline_automation, webhook_delivery_sensor],
    # What `dagster asset materialize` runs with (the jobs name their own): on the embedded default
    # DuckDB admits one writer process, so steps run in the run's process.
    executor=dg.in_process_executor,
    resources={
        # With $MEMCORE_URL set (and an admin key in $MEMCORE_KEY) the maintenance assets and the
        # sensors go through that memory service instead of opening the home.
        "memory_home": MemoryHomeResource(url=resolve_service()[0] or ""),
        "embedder": EmbedderResource(),
        "llm": LLMResource(),
    },
)
