"""The first slice: synthetic timeline corpus → memory writes → invariant checks → summary.

No `from __future__ import annotations` here: Dagster reads config and resource types from
the live annotations.
"""

import json
from collections import Counter

import dagster as dg

from corpora.timeline import TimelineCorpus, check_probes, generate_timeline, load_timeline
from memory_core.reports import store_summary, summary_markdown

from .resources import MemoryHomeResource
from .sources import memory_home_source

STORE_POOL = "memory_store"


class TimelineConfig(dg.Config):
    seed: int = 7
    subjects: int = 40
    tenant: str = "timeline-demo"


def _table(rows: list[tuple], header: tuple[str, ...]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


@dg.asset(
    group_name="corpora",
    code_version="1",
    description="Deterministic synthetic subjects whose facts change over time.",
)
def timeline_corpus(context: dg.AssetExecutionContext, config: TimelineConfig) -> dg.Output[TimelineCorpus]:
    corpus = generate_timeline(seed=config.seed, subjects=config.subjects)
    by_event = Counter(e.event for e in corpus.events)
    return dg.Output(
        corpus,
        data_version=dg.DataVersion(corpus.fingerprint),  # the content: another seed is another corpus
        metadata={
            "events": len(corpus.events),
            "subjects": len(corpus.subjects),
            "probes": len(corpus.probes),
            "fingerprint": corpus.fingerprint,
            "events_by_kind": dg.MetadataValue.md(_table(sorted(by_event.items()), ("event", "count"))),
        },
    )


@dg.asset(
    group_name="bitemporal",
    pool=STORE_POOL,
    deps=[memory_home_source],
    code_version="1",
    description="The timeline corpus written through the Memory tool, one run identity per subject.",
)
def timeline_memory(
    context: dg.AssetExecutionContext,
    config: TimelineConfig,
    memory_home: MemoryHomeResource,
    timeline_corpus: TimelineCorpus,
) -> None:
    with memory_home.open() as memory:
        report = load_timeline(
            memory,
            timeline_corpus,
            tenant=config.tenant,
            run=context.run.run_id,
            progress=lambda n, total: context.log.info(f"wrote {n}/{total} statements"),
        )
    context.add_output_metadata(
        {
            "home": str(memory_home.path),
            "tenant": report.tenant,
            "loaded_now": report.loaded,
            "statements": report.events,
            "verdicts": dg.MetadataValue.json(report.verdicts or {"already_loaded": report.events}),
        }
    )


@dg.asset_check(
    asset=timeline_memory, blocking=True, description="No (identity, key) holds two facts whose live intervals overlap."
)
def no_overlapping_live_intervals(memory_home: MemoryHomeResource) -> dg.AssetCheckResult:
    with memory_home.open(read_only=True) as memory:
        overlaps = memory.store.inspection.overlapping_intervals()
    return dg.AssetCheckResult(
        passed=not overlaps,
        metadata={"overlapping_pairs": len(overlaps), "examples": dg.MetadataValue.json(overlaps[:5])},
    )


@dg.asset_check(asset=timeline_memory, description="The hash-chained audit log verifies end to end.")
def audit_chain_verifies(memory_home: MemoryHomeResource) -> dg.AssetCheckResult:
    with memory_home.open(read_only=True) as memory:
        report = memory.verify_audit()
    return dg.AssetCheckResult(passed=report.ok, metadata={"rows": report.rows, "problem": report.problem or ""})


@dg.asset_check(
    asset=timeline_memory,
    additional_ins={"timeline_corpus": dg.AssetIn()},
    description="Every as_of probe answers what the corpus says was true then.",
)
def probes_answer_as_constructed(
    memory_home: MemoryHomeResource, config: TimelineConfig, timeline_corpus: TimelineCorpus
) -> dg.AssetCheckResult:
    with memory_home.open(read_only=True) as memory:
        right, wrong = check_probes(memory, timeline_corpus, tenant=config.tenant)
    total = right + len(wrong)
    return dg.AssetCheckResult(
        passed=not wrong,
        metadata={
            "probes": total,
            "right": right,
            "accuracy": right / total if total else 1.0,
            "wrong_examples": dg.MetadataValue.json([str(p) for p in wrong[:5]]),
        },
    )


@dg.asset(
    group_name="bitemporal",
    deps=[timeline_memory],
    code_version="1",
    description="Row counts of the bi-temporal store, written to reports/ in the memory home.",
)
def timeline_summary(context: dg.AssetExecutionContext, memory_home: MemoryHomeResource) -> None:
    with memory_home.open(read_only=True) as memory:
        summary = store_summary(memory)
    reports = memory_home.path / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "timeline_summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    markdown = summary_markdown(summary)
    (reports / "timeline_summary.md").write_text(markdown)
    context.add_output_metadata(
        {
            **{name: count for name, count in summary["tables"].items()},
            "tenants": summary["tenants"],
            "owners": summary["owners"],
            "keys": summary["keys"],
            "summary": dg.MetadataValue.md(markdown),
            "report": dg.MetadataValue.path(str(reports / "timeline_summary.md")),
        }
    )


@dg.asset_check(
    asset=timeline_memory,
    blocking=True,
    description="No row is reachable from another tenant than its own (versions, tenant scope, graph).",
)
def no_row_across_tenants(memory_home: MemoryHomeResource) -> dg.AssetCheckResult:
    with memory_home.open(read_only=True) as memory:
        problems = memory.store.inspection.cross_tenant_rows()
    return dg.AssetCheckResult(
        passed=not problems,
        metadata={
            "problems": len(problems),
            "examples": dg.MetadataValue.json([{k: str(v) for k, v in p.items()} for p in problems[:5]]),
        },
    )


@dg.asset_check(asset=timeline_memory, description="Every table and view of the home has a known role.")
def every_table_classified(memory_home: MemoryHomeResource) -> dg.AssetCheckResult:
    from memory_core.adapters.duckdb.inspection import TABLE_CLASSES

    with memory_home.open(read_only=True) as memory:
        missing = memory.store.inspection.unclassified_tables()
    return dg.AssetCheckResult(
        passed=not missing,
        metadata={
            "unclassified": dg.MetadataValue.json(missing),
            "classes": dg.MetadataValue.md("\n".join(f"- `{t}`: {c}" for t, c in sorted(TABLE_CLASSES.items()))),
        },
    )
