"""One value current: the interval repair of a single-valued relation, as pure functions.

Every observation of a ``(subject, relation)`` is placed by one key, ``(valid_at day, seen_at,
object)``. A pairwise rule that switches between dates and arrivals is not transitive (three
values can each beat the next); a key read back from stored columns is a total order, so every
repair, whichever write runs it and in whatever order the writes came, closes the same values.

The repair is a function of the stored observations alone: an open-ended observation ends when
the earliest observation of another value that is newer by the key starts, never before its own
start; one
stated with its own end is left as it is; one a retirement ended keeps that end (or a newer
value's start, if sooner), and still counts as the value that followed the ones before it,
unless it never held (retired in the instant it started).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Collection, Sequence

from .model import FALLBACK, NEWER_VALUE, RETIRED, Observation

End = tuple[datetime | None, str | None]


def repair(observations: Sequence[Observation]) -> dict[str, End]:
    """The end each observation of one single-valued relation should carry, by triple id.

    Applied until nothing moves: a retired value cut short by a newer one may turn out never to
    have held, and then it closes nothing (a few rounds at most; bounded by the row count)."""
    current = list(observations)
    for _ in range(len(current) + 1):
        ends = _one_pass(current)
        if all((o.ended_at, o.end_reason) == ends[o.triple_id] for o in current):
            return ends
        current = with_ends(current, ends)
    return ends


def _one_pass(observations: Sequence[Observation]) -> dict[str, End]:
    ordered = sorted(observations, key=lambda o: o.order_key)
    out: dict[str, End] = {}
    for i, obs in enumerate(ordered):
        newer = [o.valid_at for o in ordered[i + 1 :] if o.object != obs.object and not _never_held(o)]
        closes_at = max(obs.valid_at, min(newer)) if newer and obs.open_ended else None
        if obs.end_reason == RETIRED:  # a retirement is final; a newer value may only end it sooner
            out[obs.triple_id] = (obs.ended_at if closes_at is None else min(obs.ended_at, closes_at), RETIRED)
        elif not obs.open_ended:
            out[obs.triple_id] = (None, None)  # "London until December" keeps its own end
        else:
            out[obs.triple_id] = (None, None) if closes_at is None else (closes_at, NEWER_VALUE)
    return out


def _never_held(obs: Observation) -> bool:
    """Retired as it started (a row replaced in its own instant): it was never a value to follow."""
    return obs.end_reason == RETIRED and obs.ended_at is not None and obs.ended_at <= obs.valid_at


def changed_ends(observations: Sequence[Observation]) -> dict[str, End]:
    """Only the ends the repair moves."""
    wanted = repair(observations)
    return {o.triple_id: wanted[o.triple_id] for o in observations if (o.ended_at, o.end_reason) != wanted[o.triple_id]}


def with_ends(observations: Sequence[Observation], ends: dict[str, End]) -> list[Observation]:
    return [
        dataclasses.replace(o, ended_at=ends[o.triple_id][0], end_reason=ends[o.triple_id][1])
        if o.triple_id in ends
        else o
        for o in observations
    ]


def fallback(
    observations: Sequence[Observation], held: Collection[str], now: datetime, new_id: str
) -> Observation | None:
    """When a retirement left the relation with no value current, the newest value a live row
    still states (closed by the value that was retired) is stated again from that retirement on.
    A value that ended on its own stays ended. ``held``: triple ids a holding row links."""
    if not observations or any(o.current_at(now) for o in observations):
        return None
    last = max(observations, key=lambda o: (o.end, o.order_key))
    if last.end_reason != RETIRED or last.ended_at is None:
        return None
    candidates = [o for o in observations if o.triple_id in held and o.end_reason == NEWER_VALUE and o.open_ended]
    if not candidates:
        return None
    value = max(candidates, key=lambda o: o.order_key)
    return dataclasses.replace(
        value,
        triple_id=new_id,
        valid_at=max(last.ended_at, value.valid_at),
        dated=False,
        seen_at=now,
        ended_at=None,
        end_reason=None,
        origin=FALLBACK,
        restore_id=None,
    )
