"""What a cluster's merge writes, decided at commit time from the rows as the merge read them and
as they are now; and what undoing a merged cluster writes. Pure: the service applies each plan
in one commit."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Callable, Mapping, Sequence

from ..model import SENSITIVITIES, FactVersion, Op, Provenance, Status, sensitivity_rank
from ..values import canonical_json, content_sha256
from ..write.sensitivity import tier
from .model import CHANGED_SINCE_READ, KEY_TAKEN, MERGE_FAILED, MERGED, ORIGIN, MergeAnswer

MAX_KEY = 200
_TICK = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class ClusterPlan:
    outcome: str
    key: str | None = None
    rows: tuple[FactVersion, ...] = ()  # the retirements, then the summary
    left_live: tuple[str, ...] = ()
    detail: str = ""

    @property
    def summary(self) -> FactVersion | None:
        return self.rows[-1] if self.rows else None


@dataclass(frozen=True, slots=True)
class UndoPlan:
    rows: tuple[FactVersion, ...]
    restored: tuple[str, ...]  # source facts brought back
    not_restored: tuple[str, ...]  # changed since the merge (restored, rewritten, erased): left as they are
    summary_retired: bool


def fallback_key(key: str, fact_ids: Sequence[str]) -> str:
    """The cluster's own key: the chosen one and a digest of the merged rows' ids."""
    digest = hashlib.sha256("\0".join(sorted(fact_ids)).encode()).hexdigest()[:10]
    return f"{key[: MAX_KEY - 11]}:{digest}"


class _Versions:
    """The next version number of each key a plan writes, from the key's head."""

    def __init__(self, head_version: Callable[[str], int]) -> None:
        self._head, self._next = head_version, {}

    def __call__(self, key: str) -> int:
        self._next[key] = self._next.get(key, self._head(key)) + 1
        return self._next[key]


def plan_merge(
    answer: MergeAnswer,
    read: Sequence[FactVersion],
    current: Mapping[str, FactVersion | None],
    *,
    holders: Callable[[str], set[str]],
    taken: set[str],
    mergeable: Callable[[FactVersion], bool],
    head_version: Callable[[str], int],
    now: datetime,
    new_id: Callable[[], str],
    actor: str,
    run_id: str,
    merger: str,
) -> ClusterPlan:
    """``read``: the cluster as the merge read it; ``current``: each of its facts now (None:
    gone); ``holders(key)``: the live facts at a key now; ``taken``: keys this run's earlier
    clusters wrote. The summary takes the chosen key only when every live row there is one the
    merge read, else the cluster's own key; a source changed since the read is left live."""
    text, chosen = " ".join(answer.text.split()), answer.key.strip()
    if not text or not chosen or len(chosen) > MAX_KEY or not chosen.isprintable():
        return ClusterPlan(MERGE_FAILED, detail="the merger gave no usable text or key")
    read_ids = {r.fact_id for r in read}
    key = next(
        (k for k in (chosen, fallback_key(chosen, sorted(read_ids))) if k not in taken and holders(k) <= read_ids),
        None,
    )
    if key is None:
        return ClusterPlan(
            KEY_TAKEN, chosen, detail="the key and the cluster's own key hold rows the merge did not read"
        )
    still = [
        r for r in read if (now_row := current.get(r.fact_id)) is not None and now_row.id == r.id and mergeable(now_row)
    ]
    left = tuple(r.fact_id for r in read if r not in still)
    if any(f in left for f in holders(key)) or len(still) < 2:
        why = "the row at the summary's key" if len(still) >= 2 else "all but one source"
        return ClusterPlan(CHANGED_SINCE_READ, key, left_live=left, detail=f"{why} changed since the read")
    named = SENSITIVITIES[max(sensitivity_rank(r.sensitivity) for r in still)]
    sensitivity = tier(named, text)
    if sensitivity == "high":
        return ClusterPlan(MERGE_FAILED, key, detail="the summary reads as high sensitivity: not written")
    version = _Versions(head_version)
    created = max([now, *(r.created_at + _TICK for r in still)])
    summary_id, change_id = new_id(), new_id()
    retired = [
        dataclasses.replace(
            r,
            id=new_id(),
            op=Op.DELETE,
            status=Status.TOMBSTONED,
            superseded_by=summary_id,
            version=version(r.key),
            change_id=change_id,
            created_at=created,
            changed_by=actor,
        )
        for r in still
    ]
    summary = _summary_row(
        still, text, key, summary_id, version(key), change_id, created, sensitivity, actor, run_id, merger
    )
    return ClusterPlan(MERGED, key, (*retired, summary), left, "")


def _common(values: Sequence[str | None]) -> str | None:
    return values[0] if len(set(values)) == 1 else None


def _latest(values: Sequence[datetime | None]) -> datetime | None:
    """The latest of instants that all exist; None (open) when any is open."""
    known = [v for v in values if v is not None]
    return max(known) if known and len(known) == len(values) else None


def _summary_row(
    still: Sequence[FactVersion],
    text: str,
    key: str,
    row_id: str,
    version: int,
    change_id: str,
    created: datetime,
    sensitivity: str,
    actor: str,
    run_id: str,
    merger: str,
) -> FactVersion:
    first = still[0]
    value_json = canonical_json(text)
    observed = [r.observed_at for r in still if r.observed_at is not None]
    return FactVersion(
        id=row_id,
        fact_id=row_id,
        tenant=first.tenant,
        scope=first.scope,
        owner_id=first.owner_id,
        key=key,
        value_json=value_json,
        content_sha256=content_sha256(value_json),
        kind=first.kind,
        memory_type=first.memory_type,
        status=Status.ACTIVE,
        op=Op.SET,
        version=version,
        change_id=change_id,
        observed_at=max(observed) if observed else None,
        valid_at=min(r.valid_at for r in still),
        invalid_at=_latest([r.invalid_at for r in still]),
        created_at=created,
        superseded_by=None,
        reinforcement_count=0,
        provenance=Provenance(first.tenant, actor, ORIGIN, model=merger, source=f"consolidation:{run_id}"),
        changed_by=actor,
        subject=_common([r.subject for r in still]),
        source_class="derived",
        sensitivity=sensitivity,
        expires_at=_latest([r.expires_at for r in still]),
        confidence=min(r.confidence for r in still),
        relations=tuple(dict.fromkeys(rel for r in still for rel in r.relations)),
    )


def plan_undo(
    summary_id: str,
    summary_now: FactVersion | None,
    sources: Sequence[tuple[FactVersion | None, Sequence[FactVersion]]],
    *,
    head_version: Callable[[str], int],
    now: datetime,
    new_id: Callable[[], str],
    actor: str,
) -> UndoPlan:
    """Retire the summary (when still live) and bring each source back to the state it had
    before the merge, when the merge's retirement is still its latest state. ``sources``: each
    source fact's latest state and its rows, oldest first."""
    version, change_id = _Versions(head_version), new_id()
    latest = [now, *(s.created_at + _TICK for s, _ in sources if s is not None)]
    if summary_now is not None:
        latest.append(summary_now.created_at + _TICK)
    created = max(latest)
    rows: list[FactVersion] = []
    retire = summary_now is not None and summary_now.live
    if retire:
        rows.append(
            dataclasses.replace(
                summary_now,
                id=new_id(),
                op=Op.DELETE,
                status=Status.TOMBSTONED,
                version=version(summary_now.key),
                change_id=change_id,
                created_at=created,
                changed_by=actor,
            )
        )
    restored, skipped = [], []
    for state, history in sources:
        if state is None or state.superseded_by != summary_id or state.status is not Status.TOMBSTONED:
            skipped.append(state.fact_id if state is not None else "")
            continue
        before = max((r for r in history if r.version < state.version), key=lambda r: r.version)
        rows.append(
            dataclasses.replace(
                before,
                id=new_id(),
                op=Op.RESTORE,
                version=version(state.key),
                change_id=change_id,
                created_at=created,
                changed_by=actor,
            )
        )
        restored.append(state.fact_id)
    return UndoPlan(tuple(rows), tuple(restored), tuple(f for f in skipped if f), retire)
