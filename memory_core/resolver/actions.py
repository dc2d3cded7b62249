"""What the conflict resolver decides for a pair of rows, as pure functions: who still holds a
value, and the rows an action (retire, flag, clear) appends to each side."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..model import FactVersion, HeadVersion, Op, Status
from .fold import Action

ACTOR = "worker:conflict-resolver"
_LIVE = (Status.ACTIVE, Status.CONFLICTED)


@dataclass(frozen=True)
class ResolverSettings:
    floor: float = 0.60
    max_peers: int = 8
    batch: int = 40
    outage_streak: int = 3  # the same transient failure this many rows in a row stops the pass
    refusal_streak: int = 3  # the same refusal this many rows of a namespace in a row pauses it
    pause_s: float = 300.0  # how long a namespace so paused waits
    malformed_attempts: int = 3  # answers with nothing usable before a row is stamped errored
    flag_rejudges: int = 3  # times a flag the answer left unjudged is judged again
    drop_after_days: int = 30  # a row owed longer is dropped unjudged, with a record


@dataclass
class PassReport:
    marked: dict[str, int] = field(default_factory=lambda: {"owed": 0, "none": 0})
    judged: int = 0
    errored: int = 0
    capped: int = 0  # rows left owed because their namespace reached its spend share
    left_owed: int = 0  # transient failures, unusable answers and unjudged flags: judged again later
    dropped: int = 0  # owed past ``drop_after_days``: stamped dropped, never judged
    paused: int = 0  # namespaces paused by this pass (the same refusal row after row)
    stopped: str | None = None  # why the pass ended early
    notice: str | None = None  # the stop changed since the last pass (a new one, or calls answered again)
    actions: dict[str, int] = field(default_factory=lambda: {"retire": 0, "flag": 0, "clear": 0, "nothing": 0})

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def holds(row: FactVersion | None, now: datetime) -> bool:
    return row is not None and row.status in _LIVE and not row.expired(now) and row.sensitivity != "high"


def pair_rows(
    head_version: HeadVersion,
    row: FactVersion,
    peer: FactVersion,
    action: Action,
    now: datetime,
    change_id: str,
    actor: str = ACTOR,
) -> list[FactVersion]:
    versions: dict[str, int] = {}

    def next_version(key: str) -> int:
        versions[key] = versions.get(key, head_version(key)) + 1
        return versions[key]

    def changed(state: FactVersion, **changes) -> FactVersion:
        return dataclasses.replace(
            state,
            id=f"{change_id[:16]}{state.fact_id[:16]}",
            version=next_version(state.key),
            change_id=change_id,
            created_at=max(now, state.created_at + timedelta(microseconds=1)),
            changed_by=actor,
            **changes,
        )

    def without(state: FactVersion, other: str) -> FactVersion:
        left = tuple(f for f in state.conflict_with if f != other)
        return changed(state, op=Op.FLAG, conflict_with=left, status=Status.CONFLICTED if left else Status.ACTIVE)

    if action.kind == "retire":
        end = max(row.valid_at, peer.valid_at)
        if peer.invalid_at is not None:
            end = min(end, peer.invalid_at)
        out = [
            changed(
                peer,
                op=Op.SUPERSEDE,
                status=Status.SUPERSEDED,
                superseded_by=row.id,
                invalid_at=end,
                conflict_with=tuple(f for f in peer.conflict_with if f != row.fact_id),
            )
        ]
        if peer.fact_id in row.conflict_with:  # the winner does not stay flagged against a retired row
            out.append(without(row, peer.fact_id))
        return out
    if action.kind == "flag":
        if peer.fact_id in row.conflict_with and row.fact_id in peer.conflict_with:
            return []  # already flagged: acting twice changes nothing
        return [
            changed(
                s, op=Op.FLAG, status=Status.CONFLICTED, conflict_with=tuple(dict.fromkeys((*s.conflict_with, other)))
            )
            for s, other in ((row, peer.fact_id), (peer, row.fact_id))
        ]
    if action.kind == "clear":
        return [
            without(s, other) for s, other in ((row, peer.fact_id), (peer, row.fact_id)) if other in s.conflict_with
        ]
    return []


def resolution_record(
    record_id: str,
    row: FactVersion,
    peer: FactVersion,
    action: Action,
    verdict: str,
    confidence: float,
    judge: str,
    at: datetime,
    reason: str,
) -> dict[str, Any]:
    """The resolver record of one action on a pair (what ``restore`` and a reviewer read back)."""
    return {
        "record_id": record_id,
        "tenant": row.tenant,
        "scope": row.scope.value,
        "owner_id": row.owner_id,
        "action": action.kind,
        "judged_fact": row.fact_id,
        "peer_fact": peer.fact_id,
        "peer_key": peer.key,
        "verdict": verdict,
        "confidence": confidence,
        "judge": judge,
        "recorded_at": at,
        "reason": reason[:300],
    }
