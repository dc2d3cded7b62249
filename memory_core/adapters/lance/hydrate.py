"""Completing a search's leg rows with the columns its hits show (``LanceIndex.hydrate``)."""

from __future__ import annotations

from typing import Any, Sequence

from .filters import fact_ids_in
from .read import SPAN_COLUMNS, IndexSnapshot
from .served import Served


def complete_rows(
    pending: Sequence[dict[str, Any]],
    rest: Sequence[str],
    snapshot: IndexSnapshot,
    served: Served,
    read_at: IndexSnapshot | None,
) -> None:
    """Complete ``pending`` in place with ``rest`` from ``snapshot``, the latest version, whose
    served rows ``served`` names (``LanceIndex.hydrate`` says when a row is looked up again)."""
    if read_at is not None and read_at.version == snapshot.version:
        for row, full in zip(pending, snapshot.take([r["_rowid"] for r in pending], rest)):
            row.update((n, full[n]) for n in rest if n not in row)
        return
    rest = list(dict.fromkeys([*rest, "status", "version_id", *SPAN_COLUMNS]))  # what the last check reads, now
    # Only row ids of fragments this version still has: one of a fragment compacted away
    # since can make Lance panic (a BaseException, not an error) instead of raising. Those
    # rows are looked up by fact id below.
    fragments = {f.fragment_id for f in snapshot.dataset.get_fragments()}
    takeable = [r["_rowid"] for r in pending if r["_rowid"] >> 32 in fragments]
    try:  # read from the files, not memory: a row deleted since is left out, not answered
        taken = snapshot.take(takeable, ["fact_id", *rest], resident=False) if takeable else []
    except (OSError, ValueError):  # a row id past the end of a rewritten fragment
        taken = []
    # By fact id, not by place: a row deleted since is left out of the take, and the rows after
    # it would no longer line up with the rows asked for.
    # A row superseded since (its fact's newer state appended) is looked up again by fact id.
    wanted = {r["fact_id"] for r in pending}
    found = {r["fact_id"]: r for r in taken if r["fact_id"] in wanted and served.admits(r)}
    missing = [r["fact_id"] for r in pending if r["fact_id"] not in found]
    if missing:
        rows_now = snapshot.rows_where(fact_ids_in(missing), ["fact_id", *rest])
        found.update((r["fact_id"], r) for r in rows_now if served.admits(r))
    for row in pending:
        full = found.get(row["fact_id"])
        if full is None:
            row["_gone"] = True
        else:
            row.update((n, full[n]) for n in rest)
