"""Plain summaries of a store, for assets, notebooks and the CLI to print."""

from __future__ import annotations

from typing import Any

from .api import Memory


def store_summary(memory: Memory) -> dict[str, Any]:
    summary = memory.store.inspection.summary()
    summary["home"] = str(memory.home)
    summary["generated_at"] = memory.clock.now().isoformat()
    summary["audit"] = memory.verify_audit().to_dict()
    return summary


def summary_markdown(summary: dict[str, Any]) -> str:
    lines = [
        "# Memory store summary",
        "",
        f"Home: `{summary['home']}`  ",
        f"Generated: {summary['generated_at']}",
        "",
        "| table | rows |",
        "|---|---|",
        *[f"| {name} | {count} |" for name, count in summary["tables"].items()],
        "",
        f"Tenants: {summary['tenants']} · owners: {summary['owners']} · keys: {summary['keys']} "
        f"(tombstoned: {summary['tombstoned_keys']})",
        "",
        "| version op | rows |",
        "|---|---|",
        *[f"| {op} | {count} |" for op, count in summary["versions_by_op"].items()],
        "",
        "| current fact status | facts |",
        "|---|---|",
        *[f"| {status} | {count} |" for status, count in summary["facts_by_status"].items()],
        "",
        f"Audit chain: {'verifies' if summary['audit']['ok'] else 'BROKEN: ' + str(summary['audit']['problem'])} "
        f"({summary['audit']['rows']} rows)",
    ]
    return "\n".join(lines) + "\n"
