"""The vector leg over rows no vector index covers yet, compared here instead of by Lance.

Rows appended since the vector index was last brought up to date are compared one by one, by
Lance or here, for the same exact cosine. Lance pays a fixed cost for that branch of its plan
whatever the rows' number: at 100,000 rows the vector query took 3.2 ms on the indexed rows
alone and 7.1 ms with 17 rows outside the index (docs/benchmarks.md, "Memory service: recall in
a write mix, fourth pass"). So a search of a table with a vector index asks Lance for the
indexed rows only (``fast_search``), reads the recent rows' vectors under the same filter in one
scan, takes the columns of those that can make the cut, and merges the two lists by distance: the
answer Lance's own plan gives, for less. Past ``RECENT_MAX_ROWS`` recent rows (a bulk load not yet
optimized) Lance compares them itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow.compute as pc

# Above this many rows outside the vector index, Lance's own scan is left to compare them.
RECENT_MAX_ROWS = 8192


def recent_fragments(dataset: Any) -> list[Any] | None:
    """The fragments of ``dataset`` its vector index does not cover; None when it has no vector
    index (Lance then compares every row, and this module has nothing to add)."""
    covered: set[int] = set()
    indexed = False
    for description in dataset.describe_indices():
        if list(description.field_names) == ["vector"]:
            indexed = True
            for segment in description.segments:
                covered.update(segment.fragment_ids)
    if not indexed:
        return None
    return [f for f in dataset.get_fragments() if f.fragment_id not in covered]


def compared_here(fragments: list[Any] | None) -> bool:
    """Are these recent fragments compared here: some, of at most ``RECENT_MAX_ROWS`` rows?"""
    return bool(fragments) and sum(f.metadata.physical_rows for f in fragments or ()) <= RECENT_MAX_ROWS


def cosine_distances(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """1 - cosine similarity of each row of ``vectors`` to ``query``, as Lance's ``cosine``
    metric gives it (float32; a zero vector stands at distance 1)."""
    query = np.asarray(query, dtype=np.float32).ravel()
    norms = np.linalg.norm(vectors, axis=1) * np.linalg.norm(query)
    dots = vectors @ query
    with np.errstate(divide="ignore", invalid="ignore"):
        similarity = np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), 0.0)
    return (1.0 - similarity).astype(np.float32)


def merge_nearest(indexed: list[dict[str, Any]], recent: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The ``limit`` nearest of both, by ``_distance``, the indexed row first on a tie."""
    if not recent:
        return indexed
    return sorted([*indexed, *recent], key=lambda row: row["_distance"])[:limit]


def matrix_of(column: Any, rows: int) -> np.ndarray:
    """An Arrow fixed-size-list column of ``rows`` vectors as one float32 matrix."""
    return np.asarray(pc.list_flatten(column).to_numpy(zero_copy_only=False), dtype=np.float32).reshape(rows, -1)


def nearest_within(distances: np.ndarray, limit: int, farthest: float) -> np.ndarray:
    """Positions of the at most ``limit`` smallest ``distances`` not past ``farthest``, nearest
    first (a stable order: the earlier row first on a tie)."""
    order = np.argsort(distances, kind="stable")[:limit]
    return order[distances[order] <= farthest]
