"""Dreams, nightly (``nightly_dreams``): one retrospective pass over every user and agent namespace
of the home. A pass only queues proposals (merge, retire, age out, procedure) for a reviewer
(``notebooks/dreams_review.py``, or ``dream_approve`` / ``dream_reject`` on the Memory tool); it
never changes memory itself, so it runs after the night's writers and consolidation.

No `from __future__ import annotations` here: Dagster reads config and resource types from the
live annotations.
"""

from typing import Any

import dagster as dg

from .resources import EmbedderResource, MemoryHomeResource
from .timeline import STORE_POOL
from .writers import STORE_WRITERS


class DreamsConfig(dg.Config):
    tenant: str = ""  # empty: every tenant of the home
    window_days: int = 7  # the rolling window of events, decision outcomes and recalls read
    stale_days: int = 90  # a fact no write touched for this long, and not recalled, may age out
    min_cosine: float = 0.85  # near-duplicates link at this cosine when they share an entity


def _counts(passes: list[dict[str, Any]]) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for p in passes:
        for proposal in p["proposed"]:
            kinds[proposal["kind"]] = kinds.get(proposal["kind"], 0) + 1
    return kinds


@dg.asset(
    group_name="maintenance",
    pool=STORE_POOL,
    deps=list(STORE_WRITERS),
    description="Dreams: a pass over every user and agent namespace's recent events, decision outcomes and "
    "live facts that queues proposals (merge, retire, age out, procedure) for approval; memory is unchanged.",
)
def dreams_pass(
    context: dg.AssetExecutionContext, config: DreamsConfig, memory_home: MemoryHomeResource, embedder: EmbedderResource
) -> dg.MaterializeResult:
    with memory_home.maintenance(embedder=embedder) as home:
        passes = home.dream(
            tenant=config.tenant or None,
            window_days=config.window_days,
            stale_days=config.stale_days,
            min_cosine=config.min_cosine,
        )
    kinds = _counts(passes)
    quiet = sum(1 for p in passes if p["no_op_decision"])
    context.log.info(f"dreams on {home.where}: {len(passes)} namespace(s), proposed {kinds}, {quiet} with nothing new")
    return dg.MaterializeResult(
        metadata={
            "namespaces": len(passes),
            "proposed": sum(kinds.values()),
            "by_kind": dg.MetadataValue.json(kinds),
            "already_queued": sum(p["already_queued"] for p in passes),
            "nothing_new": quiet,
            "proposals": dg.MetadataValue.json(
                [q["proposal_id"] for p in passes for q in p["proposed"]][:200]  # the first, for the reviewer
            ),
        }
    )
