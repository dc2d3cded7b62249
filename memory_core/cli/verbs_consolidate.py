"""The consolidation verbs: merge a scope's similar facts, list its runs, undo one, and read a
key's lineage."""

from __future__ import annotations

from .registry import Call, Output, arg, verb


@verb(
    "consolidate",
    "merge clusters of similar live facts of the scope into one summary each (undoable)",
    arg("--min-cosine", type=float, help="the cosine two rows sharing an entity link at (default 0.85)"),
    arg("--max-cluster", type=int, help="rows a summary merges at most (default 6)"),
    arg("--dry-run", action="store_true", help="find the clusters, write nothing"),
    writes=True,
)
def consolidate(call: Call) -> Output:
    args = call.args
    run = call.tool.consolidate(
        scope=args.scope, min_cosine=args.min_cosine, max_cluster=args.max_cluster, dry_run=args.dry_run
    )
    lines = [
        f"{run.run_id}: {run.merged} cluster(s) merged, {run.failed} not; live rows {run.live_before} -> "
        f"{run.live_after}" + (" (dry run)" if run.dry_run else "")
    ]
    lines += [f"  {c.outcome:<18} {c.summary_key or '-'} <- {len(c.source_facts)} row(s)" for c in run.clusters]
    return run.to_dict(), "\n".join(lines), 0


@verb("consolidation-runs", "the scope's consolidation runs and each cluster's outcome")
def consolidation_runs(call: Call) -> Output:
    runs = [r.to_dict() for r in call.tool.consolidation_runs(scope=call.args.scope)]
    text = "\n".join(
        f"{r['run_id']} {r['finished_at']} merged={r['merged']} failed={r['failed']}"
        + (f" undone {r['undone_at']}" if r["undone_at"] else "")
        for r in runs
    )
    return {"runs": runs}, text or "(no consolidation runs)", 0


@verb(
    "consolidation-undo",
    "undo a consolidation run: its summaries retired, its merged rows back",
    arg("run_id", help="the run (consolidation-runs lists them)"),
    writes=True,
)
def consolidation_undo(call: Call) -> Output:
    undone = call.tool.consolidation_undo(call.args.run_id, scope=call.args.scope)
    text = f"{undone['restored']} row(s) restored" + (
        f"; {len(undone['not_restored'])} changed since the merge, left as they are" if undone["not_restored"] else ""
    )
    return undone, text, 0


@verb("lineage", "what a key's facts were derived from, and what was derived from them", key=True)
def lineage(call: Call) -> Output:
    rows = call.tool.lineage(call.args.key, scope=call.args.scope)
    text = "\n".join(f"{r['key']} <- {r['source_key']} ({r['support_type']}, {r['run_id']})" for r in rows)
    return {"lineage": rows}, text or "(no lineage)", 0
