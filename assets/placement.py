"""The placement group: typed facts placed by the tenant's ontology, both halves in one scope.

Until extraction lands, what is placed is the synthetic placement corpus (``corpora.placement``),
whose every expected scope and reason is known by construction.

No `from __future__ import annotations` here: Dagster reads config and resource types from
the live annotations.
"""

import dagster as dg

from corpora.placement import PlacementCorpus, generate_placement, load_placed
from memory_core.identity import Scope

from .resources import MemoryHomeResource
from .sources import memory_home_source
from .timeline import STORE_POOL, _table


class PlacementConfig(dg.Config):
    seed: int = 11
    items: int = 120
    tenant: str = "placement-demo"


@dg.asset(
    group_name="corpora",
    code_version="1",
    description="Synthetic typed facts whose placement is known by construction.",
)
def placement_corpus(context: dg.AssetExecutionContext, config: PlacementConfig) -> dg.Output[PlacementCorpus]:
    corpus = generate_placement(seed=config.seed, items=config.items, tenant=config.tenant)
    expected: dict[str, int] = {}
    for item in corpus.items:
        expected[item.expected_reason] = expected.get(item.expected_reason, 0) + 1
    return dg.Output(
        corpus,
        data_version=dg.DataVersion(corpus.fingerprint),
        metadata={
            "items": len(corpus.items),
            "fingerprint": corpus.fingerprint,
            "expected_reasons": dg.MetadataValue.md(_table(sorted(expected.items()), ("reason", "items"))),
        },
    )


@dg.asset(
    group_name="placement",
    pool=STORE_POOL,
    deps=[memory_home_source],
    code_version="1",
    description="Each fact written with scope=auto: the k/v row and its graph fact land in the scope the "
    "ontology decides (tenant only when nothing is uncertain), in one transaction.",
)
def placed_facts(
    context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, placement_corpus: PlacementCorpus
) -> dict:
    with memory_home.open() as memory:
        report = load_placed(
            memory, placement_corpus, progress=lambda n, total: context.log.info(f"placed {n}/{total} facts")
        )
        counts = memory.store.graph.counts()
    context.add_output_metadata(
        {
            "written": report.written,
            "tenant_scope": report.by_scope.get(Scope.TENANT.value, 0),
            "user_scope": report.by_scope.get(Scope.USER.value, 0),
            "mismatches": len(report.mismatches),
            "halves_apart": len(report.halves_apart),
            **counts,
            "by_reason": dg.MetadataValue.md(_table(list(report.by_reason.items()), ("reason", "facts"))),
        }
    )
    return {"mismatches": list(report.mismatches), "halves_apart": list(report.halves_apart)}


@dg.asset_check(
    asset=placed_facts,
    blocking=True,
    description="Every fact landed where the corpus says, with its row and graph fact in one scope.",
)
def placement_as_constructed(placed_facts: dict) -> dg.AssetCheckResult:
    mismatches, apart = placed_facts["mismatches"], placed_facts["halves_apart"]
    return dg.AssetCheckResult(
        passed=not mismatches and not apart,
        metadata={
            "mismatches": len(mismatches),
            "halves_apart": len(apart),
            "examples": dg.MetadataValue.json((mismatches + [{"apart": k} for k in apart])[:5]),
        },
    )
