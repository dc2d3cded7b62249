"""The reflect pipeline as five assets partitioned by tenant (docs/reflect.md): reduce, reflect,
reweave, verify and archive, each one phase of ``Memory.reflect_phase`` over the tenant's
state-change events since that phase's own cursor. The reflect job runs them in order for one
tenant; its schedule asks for a run of every tenant partition (the tenant sensor registers
them). Each phase is idempotent and resumes from its cursor, so a failed run is simply run again.

The pipeline opens the home here (it writes through the write paths of the process that holds
it); with ``memory_home.url`` set, a served home, it refuses rather than wait on the service.

No `from __future__ import annotations` here: Dagster reads resource types from the annotations.
"""

from typing import Any, Sequence

import dagster as dg

from .resources import EmbedderResource, MemoryHomeResource
from .tenants import tenants
from .timeline import STORE_POOL
from .writers import STORE_WRITERS

GROUP = "reflect"


def _phase(name: str, phase: str, deps: Sequence[Any], description: str) -> dg.AssetsDefinition:
    @dg.asset(
        name=name,
        group_name=GROUP,
        partitions_def=tenants,
        pool=STORE_POOL,
        deps=list(deps),
        description=description,
    )
    def run_phase(
        context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, embedder: EmbedderResource
    ) -> dg.MaterializeResult:
        if memory_home.url:
            raise dg.Failure(
                description=f"the reflect pipeline writes through the home it opens; {memory_home.url} serves it. "
                "Run the reflect job where the home is opened (memory_home.url empty)"
            )
        tenant = context.partition_key
        with memory_home.open(embedder=embedder) as memory:
            report = memory.reflect_phase(tenant, phase).to_dict()
            rejected = (
                [
                    {"text": c["text"][:120], "reason": c["reason"]}
                    for c in memory.reflect_state(tenant)["claims"]
                    if c["status"] == "rejected" and report["since"] < c["source_seq"] <= report["upto"]
                ]
                if phase == "verify"
                else None
            )
        context.log.info(f"reflect {phase} of {tenant}: {report}")
        metadata: dict[str, Any] = {"cursor_from": report["since"], "cursor_to": report["upto"]}
        metadata.update({k: v for k, v in report.items() if k not in ("tenant", "phase", "since", "upto")})
        if rejected is not None:
            metadata["rejected_claims"] = dg.MetadataValue.json(rejected)
        return dg.MaterializeResult(metadata=metadata)

    return run_phase


reflect_reduce = _phase(
    "reflect_reduce",
    "reduce",
    [w for w in STORE_WRITERS if w.partitions_def is None],
    "Reduce: the tenant's captures, transcripts and decision traces written since the cursor, each read into "
    "atomic claims (one per statement) staged with their source and namespace; never the pipeline's own rows.",
)
reflect_connect = _phase(
    "reflect_connect",
    "reflect",
    [reflect_reduce],
    "Reflect: each staged claim's connections: near live facts of its namespace that support or contradict it "
    "(a suppression against a positive), and facts that share an entity with it in the graph.",
)
reflect_reweave = _phase(
    "reflect_reweave",
    "reweave",
    [reflect_connect],
    "Reweave: how each claim updates what is known: new, held by its capture, reinforce, refine, supersede an "
    "older contradicted fact, update its key, or stale (contradicted by a later fact).",
)
reflect_verify = _phase(
    "reflect_verify",
    "verify",
    [reflect_reweave],
    "Verify: schema checks (content, length, key, memory type) and dedup (an identical live fact); a failing "
    "claim is kept with its reason, the others are written through the write path, idempotently.",
)
reflect_archive = _phase(
    "reflect_archive",
    "archive",
    [reflect_verify],
    "Archive: the inputs whose claims are all decided, and those claims, marked processed.",
)

REFLECT = (reflect_reduce, reflect_connect, reflect_reweave, reflect_verify, reflect_archive)
