"""The one Dagster ``defs`` of the platform. `dagster dev -m assets.definitions` loads it."""
from __future__ import annotations

import dagster as dg

from .resources import MemoryHomeResource
from .timeline import (audit_chain_verifies, no_overlapping_live_intervals, probes_answer_as_constructed,
                       timeline_corpus, timeline_memory, timeline_summary)

ASSETS = [timeline_corpus, timeline_memory, timeline_summary]
CHECKS = [no_overlapping_live_intervals, audit_chain_verifies, probes_answer_as_constructed]

main_job = dg.define_asset_job("main", selection=dg.AssetSelection.all(),
                               description="The main pipeline, end to end, on the embedded default.",
                               executor_def=dg.in_process_executor)

defs = dg.Definitions(
    assets=ASSETS,
    asset_checks=CHECKS,
    jobs=[main_job],
    resources={"memory_home": MemoryHomeResource()},
)
