"""What a consolidation run is made of: its settings, a merge's request and answer, each
cluster's outcome and the run's record."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import InvalidInput
from ..temporal import iso

# How a cluster ended. ``merged``: the summary was written and its sources retired (some may be
# left live, listed in ``left_live``). The others write nothing.
MERGED = "merged"
KEY_TAKEN = "key_taken"  # the summary's key and its fallback both held a row the merge did not read
CHANGED_SINCE_READ = "changed_since_read"  # too few sources still as read, or the key's own row changed
MERGE_FAILED = "merge_failed"  # the merger gave no usable summary
OUTCOMES = (MERGED, KEY_TAKEN, CHANGED_SINCE_READ, MERGE_FAILED)

ACTOR = "worker:consolidation"
ORIGIN = "memory.consolidate"


@dataclass(frozen=True, slots=True)
class ConsolidationSettings:
    """When two rows belong together. A pair links at ``min_cosine`` when the rows share an
    entity (a subject, a related entity or a name in their text), or at ``strong_cosine``
    alone. Clusters grow around a seed row (no chains: every member links to the seed) up to
    ``max_cluster`` rows."""

    min_cosine: float = 0.85
    strong_cosine: float = 0.93
    max_cluster: int = 6
    max_rows: int = 50_000  # a namespace larger than this is refused, not read whole

    def __post_init__(self) -> None:
        if not (0.0 < self.min_cosine <= self.strong_cosine <= 1.0):
            raise InvalidInput("min_cosine must be above 0 and at most strong_cosine (at most 1)", field="min_cosine")
        if self.max_cluster < 2:
            raise InvalidInput("max_cluster must be at least 2", field="max_cluster")


@dataclass(frozen=True, slots=True)
class MergeSource:
    fact_id: str
    key: str
    text: str
    valid_at: str  # ISO instant
    subject: str | None = None


@dataclass(frozen=True, slots=True)
class MergeRequest:
    """The cluster a merger summarises, oldest statement first."""

    sources: tuple[MergeSource, ...]


@dataclass(frozen=True, slots=True)
class MergeAnswer:
    key: str  # the key the merger chose for the summary
    text: str


@dataclass(frozen=True, slots=True)
class ClusterOutcome:
    cluster: int
    outcome: str
    source_facts: tuple[str, ...]  # every row the merge read
    summary_key: str | None = None
    summary_fact: str | None = None
    left_live: tuple[str, ...] = ()  # read, but changed since the read: not retired
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "outcome": self.outcome,
            "source_facts": list(self.source_facts),
            "summary_key": self.summary_key,
            "summary_fact": self.summary_fact,
            "left_live": list(self.left_live),
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class ConsolidationRun:
    """One run over one namespace: what it read, what each cluster became."""

    run_id: str
    tenant: str
    scope: str
    owner_id: str
    actor: str
    merger: str
    started_at: datetime
    finished_at: datetime
    live_before: int
    live_after: int
    clusters: tuple[ClusterOutcome, ...]
    dry_run: bool = False
    undone_at: datetime | None = None

    @property
    def merged(self) -> int:
        return sum(1 for c in self.clusters if c.outcome == MERGED)

    @property
    def failed(self) -> int:
        return len(self.clusters) - self.merged

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "tenant": self.tenant,
            "scope": self.scope,
            "owner_id": self.owner_id,
            "actor": self.actor,
            "merger": self.merger,
            "started_at": iso(self.started_at),
            "finished_at": iso(self.finished_at),
            "live_before": self.live_before,
            "live_after": self.live_after,
            "merged": self.merged,
            "failed": self.failed,
            "dry_run": self.dry_run,
            "undone_at": iso(self.undone_at) if self.undone_at else None,
            "clusters": [c.to_dict() for c in self.clusters],
        }
