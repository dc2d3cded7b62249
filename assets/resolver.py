"""The resolver's synthetic workload: labelled statement pairs written into their own tenant, so
the scheduled resolver pass (``maintenance/resolver_pass``) has something to judge offline.

No `from __future__ import annotations` here: Dagster reads config and resource types from
the live annotations.
"""

import hashlib
from collections import Counter
from itertools import zip_longest

import dagster as dg

from corpora.resolver_pairs import timeline_pairs
from memory_core import Identity

from .resources import MemoryHomeResource
from .sources import memory_home_source
from .timeline import STORE_POOL


class ResolverDemoConfig(dg.Config):
    tenant: str = "resolver-demo"
    pairs: int = 120


@dg.asset(
    group_name="corpora",
    code_version="1",
    description="Labelled statement pairs (update / contradiction / compatible) generated from the synthetic "
    "timeline, labels known by construction: what the resolver's demo writes and its calibration judges.",
)
def resolver_pairs_corpus() -> dg.MaterializeResult:
    pairs = timeline_pairs()
    counts = Counter(pair.label for pair in pairs)
    content = hashlib.sha256(repr([(p.label, p.peer, p.new) for p in pairs]).encode()).hexdigest()[:16]
    return dg.MaterializeResult(
        data_version=dg.DataVersion(content),
        metadata={
            "pairs": sum(counts.values()),
            "labels": dg.MetadataValue.json(dict(counts)),
            "provenance": "synthetic",
        },
    )


@dg.asset(
    group_name="bitemporal",
    pool=STORE_POOL,
    deps=[resolver_pairs_corpus, memory_home_source],
    code_version="1",
    description="Synthetic statement pairs (update / contradiction / compatible by construction), each "
    "pair written by one user under two keys, the older first; the write path leaves them "
    "(auto_reinforce, threshold 0.99) for the resolver to judge.",
)
def resolver_demo_statements(
    context: dg.AssetExecutionContext, config: ResolverDemoConfig, memory_home: MemoryHomeResource
) -> dg.MaterializeResult:
    by_label: dict = {}
    for pair in timeline_pairs():
        by_label.setdefault(pair.label, []).append(pair)
    # Round robin over the labels, so a small workload still holds every kind of pair.
    pairs = [p for group in zip_longest(*by_label.values()) for p in group if p is not None][: config.pairs]
    marker = f"resolver_demo:{config.tenant}:{len(pairs)}"
    with memory_home.open() as memory:
        if memory.store.inspection.marker(marker):
            return dg.MaterializeResult(metadata={"written": 0, "already_loaded": len(pairs)})
        admin = memory.for_run(Identity(tenant=config.tenant, user="admin", admin=True))
        admin.configure(policy="auto_reinforce", conflict_threshold=0.99)
        labels: dict = {}
        for i, pair in enumerate(pairs):
            tool = memory.for_run(
                Identity(tenant=config.tenant, user=f"person-{i:04d}", agent="demo", session="demo"),
                origin="assets.resolver_demo",
            )
            tool.set("statement-a", pair.peer)
            tool.set("statement-b", pair.new)
            labels[pair.label] = labels.get(pair.label, 0) + 1
        memory.store.inspection.set_marker(marker, "loaded")
    return dg.MaterializeResult(metadata={"written": 2 * len(pairs), "labels": dg.MetadataValue.json(labels)})
