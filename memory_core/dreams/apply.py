"""What approving a proposal checks and writes, decided from its targets as the pass read them
and as they are now. Pure: the service re-reads the targets under the store's lock and commits.

A proposal applies only to the world it was made from: a target whose row, trace version or
key head differs from what the pass read makes the approval refuse (the proposal goes stale).
Every row an approval writes carries the proposal in its provenance (origin ``memory.dreams``,
source ``dreams:<proposal_id>``), which is how later passes leave Dreams' own output alone; a
retirement's ``restore`` brings back the row as it was before, provenance and all.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import Callable, Iterable, Sequence

from ..consolidation import RuleMerger
from ..model import FactVersion, Op, Status
from ..texts import value_text
from .model import MERGE, ORIGIN, DreamProposal, DreamTarget, tag
from .propose import clip, merge_request

FACT_PLANES = ("fact", "note", "document")
_TICK = timedelta(microseconds=1)


def changed_targets(
    targets: Iterable[DreamTarget],
    fact_now: Callable[[DreamTarget], FactVersion | None],
    decision_version: Callable[[str], int | None],
    head_of: Callable[[str], str | None],
) -> list[str]:
    """The targets that are no longer as read, each said in words (empty: all as read)."""
    out = []
    for t in targets:
        if t.kind in FACT_PLANES:
            state = fact_now(t)
            if state is None or state.id != t.version or not state.live:
                out.append(f"{t.key!r} changed since the pass read it")
        elif t.kind == "decision":
            if str(decision_version(t.ident)) != t.version:
                out.append(f"decision {t.ident} has a newer version")
        elif t.kind == "key" and head_of(t.ident) != t.version:
            out.append(f"the key {t.ident!r} was written since the pass read it")
    return out


def stamped(rows: Sequence[FactVersion], proposal_id: str) -> tuple[FactVersion, ...]:
    """The rows, each naming the proposal as where it came from."""
    return tuple(
        dataclasses.replace(r, provenance=dataclasses.replace(r.provenance, origin=ORIGIN, source=tag(proposal_id)))
        for r in rows
    )


def age_out_row(
    state: FactVersion, version: int, change_id: str, row_id: str, now: datetime, actor: str
) -> FactVersion:
    """The fact tombstoned, as a delete writes it (``restore`` undoes it)."""
    return dataclasses.replace(
        state,
        id=row_id,
        op=Op.DELETE,
        status=Status.TOMBSTONED,
        version=version,
        change_id=change_id,
        created_at=max(now, state.created_at + _TICK),
        changed_by=actor,
    )


# The queue keeps no fact's words: a redaction scrubs a value in the log and its copies, and a
# proposal is not one of them. A proposal is shown with the words of the rows it read (by row
# id, so a redacted row shows as redacted) and a merge with the summary those rows make.


def without_words(p: DreamProposal) -> DreamProposal:
    """What the queue keeps of a proposal."""
    targets = tuple(dataclasses.replace(t, text="") if t.kind in FACT_PLANES else t for t in p.targets)
    change = {k: v for k, v in p.change.items() if not (p.kind == MERGE and k == "text")}
    return dataclasses.replace(p, targets=targets, change=change)


def with_words(p: DreamProposal, rows: dict[str, FactVersion]) -> DreamProposal:
    """The proposal as a reviewer reads it; ``rows``: the version rows it read, by row id."""
    targets = tuple(
        dataclasses.replace(t, text=clip(value_text(rows[t.version].value)))
        if t.kind in FACT_PLANES and t.version in rows
        else t
        for t in p.targets
    )
    change = dict(p.change)
    read = [rows[t.version] for t in p.targets if t.kind in FACT_PLANES and t.version in rows]
    if p.kind == MERGE and len(read) == len(p.targets):
        change["text"] = RuleMerger().merge(merge_request(read)).text
    return dataclasses.replace(p, targets=targets, change=change)
