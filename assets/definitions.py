"""The one Dagster ``defs`` of the platform. `dagster dev -m assets.definitions` loads it."""
import dagster as dg

from .evals import locomo_recall
from .resources import EmbedderResource, MemoryHomeResource
from .retrieval import index_agrees_with_heads, retrieval_index
from .timeline import (audit_chain_verifies, no_overlapping_live_intervals, probes_answer_as_constructed,
                       timeline_corpus, timeline_memory, timeline_summary)

ASSETS = [timeline_corpus, timeline_memory, timeline_summary, retrieval_index, locomo_recall]
CHECKS = [no_overlapping_live_intervals, audit_chain_verifies, probes_answer_as_constructed, index_agrees_with_heads]

main_job = dg.define_asset_job("main", selection=dg.AssetSelection.all(),
                               description="The main pipeline, end to end, on the embedded default.",
                               executor_def=dg.in_process_executor)

defs = dg.Definitions(
    assets=ASSETS,
    asset_checks=CHECKS,
    jobs=[main_job],
    resources={"memory_home": MemoryHomeResource(), "embedder": EmbedderResource()},
)
