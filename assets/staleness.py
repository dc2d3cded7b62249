"""Which assets need materializing: missing or stale as the Dagster UI shows them, and everything
downstream of those (a rematerialized writer changes the store its readers read).

``plan`` and ``partition_ranges`` decide, purely; ``status_of`` asks Dagster. Dagster 1.13 has no
public API for stale status, so ``status_of`` is the one place that reaches into ``dagster._core``
(as the UI and ``dagster._utils.test`` do).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import dagster as dg

FRESH = "FRESH"


@dataclass(frozen=True, slots=True)
class AssetStatus:
    """One asset's (or one partition's) status: FRESH, STALE or MISSING, and why if stale."""

    key: str
    status: str
    causes: tuple[str, ...] = ()
    partition: str | None = None

    @property
    def why(self) -> str:
        if self.status == "MISSING":
            return "never materialized"
        return "stale: " + "; ".join(self.causes) if self.causes else self.status.lower()


def status_of(
    instance: dg.DagsterInstance, definitions: dg.Definitions, keys: Iterable[str], partition: str | None = None
) -> dict[str, AssetStatus]:
    """Each asset's status now (of ``partition``, for partitioned assets), from the event log."""
    return statuses_by_partition(instance, definitions, keys, [partition])[partition]


def statuses_by_partition(
    instance: dg.DagsterInstance,
    definitions: dg.Definitions,
    keys: Iterable[str],
    partitions: Sequence[str | None],
) -> dict[str | None, dict[str, AssetStatus]]:
    """Each asset's status in each partition, through one resolver (its cache spans the call)."""
    from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
    from dagster._core.definitions.data_version import CachingStaleStatusResolver
    from dagster._time import get_current_datetime

    graph = definitions.resolve_asset_graph()
    view = AssetGraphView(
        temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
        instance=instance,
        asset_graph=graph,
    )
    resolver = CachingStaleStatusResolver(instance=instance, asset_graph=graph, loading_context=view)
    names = list(keys)
    out: dict[str | None, dict[str, AssetStatus]] = {}
    for partition in partitions:
        out[partition] = {}
        for name in names:
            key = dg.AssetKey(name)
            # Once each: a partitioned dependency gives the same cause for each of its partitions.
            causes = tuple(
                dict.fromkeys(
                    f"{c.reason} ({c.dependency.asset_key.to_user_string()})" if c.dependency else c.reason
                    for c in resolver.get_stale_causes(key, partition)
                )
            )
            out[partition][name] = AssetStatus(name, resolver.get_status(key, partition).value, causes, partition)
    return out


def children_of(definitions: dg.Definitions, keys: Iterable[str]) -> dict[str, set[str]]:
    """Each asset's direct downstream, by name."""
    graph = definitions.resolve_asset_graph()
    return {name: {child.to_user_string() for child in graph.get(dg.AssetKey(name)).child_keys} for name in keys}


def plan(statuses: Mapping[str, AssetStatus], children: Mapping[str, set[str]]) -> list[str]:
    """The assets to materialize, sorted: every one not fresh and everything downstream of it,
    among those ``statuses`` covers (the run's selection)."""
    todo = [name for name, s in statuses.items() if s.status != FRESH]
    chosen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in chosen or name not in statuses:
            continue
        chosen.add(name)
        todo.extend(children.get(name, ()))
    return sorted(chosen)


def partition_ranges(keys: Sequence[str], wanted: Iterable[str]) -> list[tuple[str, str]]:
    """``wanted`` as the fewest runs of consecutive partition keys (a range is one run), in order."""
    want = set(wanted)
    ranges: list[tuple[str, str]] = []
    start = previous = None
    for key in keys:
        if key in want:
            start = key if start is None else start
            previous = key
        elif start is not None:
            ranges.append((start, previous))
            start = None
    if start is not None:
        ranges.append((start, previous))
    return ranges
