"""Evaluation assets: each runs one of the suites ``memcore eval`` runs (``evals.suites``) and
publishes its figures; LoCoMo's table is also kept in DuckDB."""

from pathlib import Path

import dagster as dg
import duckdb

from corpora.locomo import LocomoNotFound
from evals.suites import COREF, LOCOMO, OBSERVATIONS, RESOLVER, Suite
from memory_core.cli.suites import EvalRequest
from memory_core.environment import shared_root

from .conversations import conversation_extraction
from .resolver import resolver_pairs_corpus
from .resources import EmbedderResource, MemoryHomeResource
from .retrieval import retrieval_index
from .sources import locomo_dev, mudoco


def upstream_identity(context: dg.AssetExecutionContext, *assets) -> dg.MetadataValue:
    """What this evaluation descends from, as Dagster last recorded each: data and code version, and
    for the index its embedder and store position (the run's tags hold the same input versions)."""
    found = {}
    for asset in assets:
        event = context.instance.get_latest_materialization_event(asset.key)
        if event is None or event.asset_materialization is None:
            continue
        materialization = event.asset_materialization
        entry = {
            "data_version": materialization.tags.get("dagster/data_version"),
            "code_version": materialization.tags.get("dagster/code_version"),
            "run_id": event.run_id,
        }
        for name in ("embedder", "store_seq", "extractor"):
            if name in materialization.metadata:
                entry[name] = materialization.metadata[name].value
        found[asset.key.to_user_string()] = entry
    return dg.MetadataValue.json(found)


def _run_suite(
    suite: Suite, memory_home: MemoryHomeResource, context: dg.AssetExecutionContext, **options
) -> tuple[dict, Path]:
    """The suite's result document and the folder its report went to."""
    request = EvalRequest(
        data=options.pop("data", None),
        shared=shared_root(),
        out=memory_home.path / "reports" / suite.name,
        models=memory_home.path / "models",
        progress=context.log.info,
        **options,
    )
    doc, _ = suite.run(request)
    return doc, request.out


class LocomoConfig(dg.Config):
    data: str = ""  # a locomo JSON file or its folder; empty: ../shared/corpora/locomo (or $MEMCORE_SHARED)
    runs: str = "bm25_only,best(static),default(static)"
    limit: int = 0


@dg.asset(
    group_name="evals",
    deps=[retrieval_index, locomo_dev],
    code_version="1",
    description="LoCoMo dialog-level evidence recall@k per retriever and category. Lineage, not input: "
    "today it measures the retrievers on an index of LoCoMo it builds itself, not the home's index.",
)
def locomo_recall(
    context: dg.AssetExecutionContext, config: LocomoConfig, memory_home: MemoryHomeResource
) -> dg.MaterializeResult:
    try:
        doc, out = _run_suite(
            LOCOMO, memory_home, context, data=config.data or None, runs=config.runs, limit=config.limit or None
        )
    except LocomoNotFound as exc:
        context.log.warning(f"skipped: {exc}. Set the asset's `data` config or MEMCORE_SHARED to run it.")
        return dg.MaterializeResult(
            metadata={"skipped": True, "reason": str(exc), "upstream": upstream_identity(context, retrieval_index)}
        )
    # The result table lives in DuckDB beside the report (its own file: evals never write the memory store).
    with duckdb.connect(str(out / "evals.duckdb")) as con:
        rows = doc["results"]
        con.execute(
            "CREATE OR REPLACE TABLE locomo_recall (name VARCHAR, embedder VARCHAR, recipe VARCHAR, "
            "questions INTEGER, r5 DOUBLE, r10 DOUBLE, r25 DOUBLE, r50 DOUBLE)"
        )
        con.executemany(
            "INSERT INTO locomo_recall VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                [r["name"], r["embedder"], r["recipe"], r["questions"], r["r@5"], r["r@10"], r["r@25"], r["r@50"]]
                for r in rows
            ],
        )
    report = Path(doc["report"]).read_text()
    return dg.MaterializeResult(
        metadata={
            "upstream": upstream_identity(context, retrieval_index),
            "data_file": doc["data_file"],
            "licence": doc["licence"],
            "conversations": doc["conversations"],
            **{f"{r['name']} r@10": r["r@10"] for r in rows},
            "report": dg.MetadataValue.md(report.replace("![recall@k](locomo_recall.png)", "")),
            "report_path": dg.MetadataValue.path(doc["report"]),
            "plot": dg.MetadataValue.path(doc["plot"]),
            "results_table": dg.MetadataValue.path(str(out / "evals.duckdb")),
        }
    )


@dg.asset(
    group_name="evals",
    deps=[conversation_extraction, mudoco],
    code_version="1",
    description="Per-span versus whole-batch extraction on coreference items (MuDoCo and "
    "a synthetic set): accuracy with bootstrap intervals and McNemar's exact test. Lineage, not input: "
    "today it measures the extractor on its own corpora, not on what conversation_extraction wrote.",
)
def coref_mcnemar(context: dg.AssetExecutionContext, memory_home: MemoryHomeResource) -> dg.MaterializeResult:
    from evals.coref import table_markdown

    doc, _ = _run_suite(COREF, memory_home, context)
    tables = doc["tables"]
    headline = tables.get("mudoco:all") or tables["synthetic"]
    return dg.MaterializeResult(
        metadata={
            "upstream": upstream_identity(context, conversation_extraction),
            "per_span_accuracy": headline["per_span"]["accuracy"],
            "whole_batch_accuracy": headline["whole_batch"]["accuracy"],
            "mcnemar_p": headline["mcnemar_p"],
            "items": headline["items"],
            "mudoco": "skipped: " + doc["mudoco_skipped"] if doc["mudoco_skipped"] else "read",
            "table": dg.MetadataValue.md(table_markdown(tables)),
            "report": dg.MetadataValue.path(doc["report"]),
        }
    )


@dg.asset(
    group_name="evals",
    deps=[conversation_extraction, locomo_dev],
    code_version="1",
    description="Share of LoCoMo's per-session observations the extractor recovers, "
    "matched at a calibrated embedding threshold. Lineage, not input: today it measures the extractor "
    "on LoCoMo itself, not on what conversation_extraction wrote.",
)
def extraction_observation_recall(
    context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, embedder: EmbedderResource
) -> dg.MaterializeResult:
    from evals.observations import table_markdown

    try:
        doc, _ = _run_suite(OBSERVATIONS, memory_home, context, embedder=embedder.name)
    except LocomoNotFound as exc:
        context.log.warning(f"skipped: {exc}")
        return dg.MaterializeResult(
            metadata={
                "skipped": True,
                "reason": str(exc),
                "upstream": upstream_identity(context, conversation_extraction),
            }
        )
    rules = doc["results"][0]
    return dg.MaterializeResult(
        metadata={
            "upstream": upstream_identity(context, conversation_extraction),
            "tau": doc["calibration"]["tau"],
            "calibration": dg.MetadataValue.json(doc["calibration"]),
            "rules_recall": rules["recall"],
            "table": dg.MetadataValue.md(table_markdown(doc["results"])),
            "report": dg.MetadataValue.path(doc["report"]),
            "licence": doc["licence"],
        }
    )


@dg.asset(
    group_name="evals",
    deps=[resolver_pairs_corpus],
    code_version="1",
    description="The conflict resolver's judge on labelled pairs: precision per confidence "
    "band, a reliability diagram, thresholds for a target precision.",
)
def resolver_calibration(context: dg.AssetExecutionContext, memory_home: MemoryHomeResource) -> dg.MaterializeResult:
    from evals.resolver_calibration import report_markdown, sentences

    doc, _ = _run_suite(RESOLVER, memory_home, context)
    return dg.MaterializeResult(
        metadata={
            "upstream": upstream_identity(context, resolver_pairs_corpus),
            "pairs": doc["pairs"],
            "labels": dg.MetadataValue.json(doc["labels"]),
            "retire_threshold": str(doc["retire_threshold"]),
            "flag_threshold": str(doc["flag_threshold"]),
            "findings": dg.MetadataValue.md("\n".join(f"- {s}" for s in sentences(doc))),
            "report": dg.MetadataValue.md(report_markdown(doc).replace("![reliability](resolver_reliability.png)", "")),
            "reliability": dg.MetadataValue.path(doc["plot"]),
        }
    )
