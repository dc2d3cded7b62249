"""Checking the writes after a run: every acknowledged set of the run and its warm-up, merged by
user in the order they ran (the last acknowledged value of a key is the one kept), then read back
from the home opened again once the service has stopped. A key whose live value differs is
classified: its acknowledged version row is absent from the key's history (a lost write) or
present but no longer live (overwritten)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any


def merge_acked(runs: list[dict], keys: list[dict]) -> dict[tuple[str, str], dict[str, list[Any]]]:
    """Every acknowledged write by (tenant, user) -> key -> [value, version id]: runs in the order
    they ran, so the last acknowledged value of a key is the one kept."""
    merged: dict[tuple[str, str], dict[str, list[Any]]] = {}
    for run in runs:
        for client, acked in run["acked"]:
            spec = keys[client]
            merged.setdefault((spec["tenant"], spec["user"]), {}).update(acked)
    return merged


def verify_writes(home: Path, merged: dict[tuple[str, str], dict[str, list[Any]]]) -> dict[str, Any]:
    """Open the home again and read every acknowledged key: its live value must be the last one
    acknowledged. A mismatch is classified: the acknowledged row is absent (lost) or present but
    not live (overwritten)."""
    from memory_core import Identity, Memory
    from memory_core.errors import NotFound

    checked = lost = not_live = 0
    examples: list[dict[str, Any]] = []
    started = time.perf_counter()
    with Memory.open(home, read_only=True) as memory:
        for (tenant, user), acked in merged.items():
            tool = memory.for_run(Identity(tenant=tenant, user=user, agent="bench"), origin="bench.verify")
            live = {row.key: row for row in tool.list()}
            for key, (value, version_id, _) in acked.items():
                checked += 1
                row = live.get(key)
                if row is not None and row.value == value:
                    continue
                try:
                    ids = {r.id for r in tool.history(key)}
                except NotFound:
                    ids = set()
                if version_id in ids:
                    not_live += 1
                else:
                    lost += 1
                if len(examples) < 5:
                    examples.append({"tenant": tenant, "user": user, "key": key, "in_history": version_id in ids})
    return {
        "checked": checked,
        "lost": lost,
        "not_live": not_live,
        "examples": examples,
        "verify_s": time.perf_counter() - started,
    }
