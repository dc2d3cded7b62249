"""The rest of the authoritative store: the graph's reads, the work queue, the resolver's ledger,
tenant settings, the index's bookkeeping, the platform's named reads, and the bundle of them
one home offers (``Store``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, Protocol, Sequence

from ..access import ApiKey
from ..audit import AuditEntry
from ..graph.follow import Link
from ..graph.model import Observation
from ..graph.plan import GraphInputs
from ..identity import Namespace
from ..model import FactVersion
from .categories import CategoryStore
from .communities import CommunityStore
from .consolidation import ConsolidationStore
from .dreams import DreamsStore
from .erasure import ErasureStore
from .learnings import LearningsStore
from .lineage import LineageStore
from .namespaces import NamespaceStore
from .observe import ObserveStore
from .profiles import ProfileSchemaStore
from .reflect import ReflectStore
from .substrate import SubstrateStore
from .usage import UsageStore
from .versions import VersionLog
from .webhooks import WebhookStore


class GraphStore(Protocol):
    """Reads of the entity graph. Its writes travel in a ``WriteBatch``."""

    def linked(self, fact_ids: Sequence[str]) -> bool:
        """Might any of these facts hold a graph link? (False only when none does.)"""
        ...

    def follow_inputs(
        self,
        namespace: Namespace,
        fact_ids: Sequence[str],
        triples: set[tuple[str, str, str]],
        entities: set[str],
        single_valued: frozenset[str],
    ) -> GraphInputs:
        """What the graph follow of a write needs to read: the facts' links, the open
        observations of the triples' subjects, every observation of the single-valued relations
        involved, the links of all of those, the latest state of each linked fact, and the types
        the entities already have."""
        ...

    def observations(
        self, namespace: Namespace, entities: Sequence[str], as_of: datetime, *, as_subject_only: bool = False
    ) -> list[tuple[Observation, list[Link]]]: ...

    def entity_types(self, namespace: Namespace, entity: str) -> list[str]: ...

    def entity_names(self, namespace: Namespace) -> frozenset[str]:
        """Every entity a triple of the namespace names, current or ended (what the graph leg
        of a search may find in a query)."""
        ...

    def counts(self) -> dict[str, int]: ...

    def current_observations(self, namespace: Namespace, as_of: datetime) -> list[Observation]:
        """Every observation of the namespace current at ``as_of`` (what a view shows of the graph)."""
        ...


# -- the work queue ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueueRow:
    queue_id: str
    namespace: Namespace
    requested_by: str
    kind: str  # extract | harvest
    payload: dict[str, Any]
    status: str
    attempts: int
    max_attempts: int
    next_attempt_at: datetime
    lease_owner: str | None
    lease_expires_at: datetime | None
    last_error: str | None
    created_at: datetime
    updated_at: datetime
    result: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "queue_id": self.queue_id,
            "tenant": self.namespace.tenant,
            "scope": self.namespace.scope.value,
            "kind": self.kind,
            "status": self.status,
            "attempts": self.attempts,
            "max_attempts": self.max_attempts,
            "next_attempt_at": self.next_attempt_at.isoformat(),
            "last_error": self.last_error,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "result": self.result,
        }


class WorkQueue(Protocol):
    """Deferred jobs (extraction, harvest) with leases: pending -> running -> done / failed."""

    def enqueue(
        self,
        queue_id: str,
        namespace: Namespace,
        requested_by: str,
        kind: str,
        payload: dict[str, Any],
        now: datetime,
        *,
        max_attempts: int = 5,
        capacity: int | None = None,
    ) -> bool: ...

    def claim(
        self, worker: str, now: datetime, *, lease_s: float, limit: int, kinds: Sequence[str] = ("extract", "harvest")
    ) -> list[QueueRow]: ...

    def complete(self, queue_id: str, worker: str, now: datetime, result: dict[str, Any]) -> bool: ...

    def fail(
        self,
        queue_id: str,
        worker: str,
        now: datetime,
        error: str,
        *,
        spent: bool = True,
        permanent: bool = False,
        backoff_s: float = 30.0,
    ) -> bool: ...

    def retry_failed(
        self, namespace: Namespace, requested_by: str, queue_ids: Sequence[str] | None, now: datetime
    ) -> list[str]: ...

    def queue_counts(self, namespace: Namespace) -> dict[str, int]: ...

    def queue_rows(
        self, namespace: Namespace, requested_by: str, queue_ids: Sequence[str] | None = None
    ) -> list[QueueRow]: ...

    def queue_backlog(self) -> dict[str, int]: ...

    def queue_cursor(self) -> str: ...

    def earlier_spans(
        self, namespace: Namespace, session: str, *, generation: int, banked_at: datetime, limit: int
    ) -> list[QueueRow]:
        """The latest ``limit`` harvest jobs of the namespace and session banked before a span of
        ``generation`` banked at ``banked_at`` (lower generation, or the same one earlier), in any
        status, oldest first: what the consolidator reads that span after."""
        ...

    def unfinished_jobs(self, namespace: Namespace) -> int: ...


# -- the conflict resolver's ledger ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Mark:
    """The resolver's mark on one written statement (a fact id)."""

    fact_id: str
    namespace: Namespace
    key: str
    content_sha256: str
    seq: int
    mark: str  # owed | none | judged | errored | dropped
    reason: str | None
    attempts: int


class ResolverLedger(Protocol):
    def resolver_watermark(self) -> int: ...

    def put_marks(self, marks: Sequence[tuple], watermark: int, at: datetime) -> None: ...

    def owed_marks(
        self, limit: int, skip_tenants: Sequence[str] = (), paused_at: datetime | None = None
    ) -> list[Mark]: ...

    def stamp(self, fact_id: str, mark: str, at: datetime, *, errored: bool = False, attempt: bool = False) -> None: ...

    def count_attempt(self, fact_id: str) -> None: ...

    def drop_stale(self, before: datetime, at: datetime, reason: str, skip_tenants: Sequence[str] = ()) -> int: ...

    def pause_namespace(self, namespace: Namespace, until: datetime, reason: str, at: datetime) -> None: ...

    def paused_namespaces(self, at: datetime) -> list[Namespace]: ...

    def resolver_stop(self) -> str: ...

    def set_resolver_stop(self, cause: str) -> None: ...

    def record_resolution(self, record: dict[str, Any]) -> None: ...

    def resolver_records(self, namespace: Namespace | None = None) -> list[dict[str, Any]]: ...

    def mark_counts(self) -> dict[str, int]: ...

    def add_spend(self, namespace: Namespace, day: date, purpose: str, cost_usd: float) -> None: ...

    def spend(self, namespace: Namespace, day: date, purpose: str | None = None) -> float: ...

    def set_erasure(self, tenant: str, status: str, at: datetime) -> None: ...

    def erasure_under_way(self, tenant: str) -> bool: ...

    def tenants_under_erasure(self) -> list[str]: ...


# -- tenant settings ---------------------------------------------------------------------------


class TenantSettingsStore(Protocol):
    def write_configs(self, tenant: str) -> dict[str, dict[str, Any]]: ...

    def put_write_config(
        self, tenant: str, memory_type: str, config: dict[str, Any], at: datetime, audit: AuditEntry
    ) -> None: ...

    def ontology(self, tenant: str) -> tuple[int, str] | None: ...

    def put_ontology(
        self, tenant: str, markdown: str, sha256: str, at: datetime, actor: str, audit: AuditEntry
    ) -> int: ...


# -- the index's bookkeeping in the store ------------------------------------------------------


class ProjectionLedger(Protocol):
    """How far the retrieval index has caught up with the log, and the index writes that failed."""

    def index_watermark(self) -> int: ...

    def set_index_watermark(self, seq: int) -> None: ...

    def record_projection_failure(self, states: Sequence[FactVersion], error: str, at: datetime) -> None: ...

    def resolve_projection_failures(self, fact_ids: Sequence[str], at: datetime) -> None: ...

    def pending_projection_failures(self, namespace: Namespace | None = None) -> list[str]: ...

    def failure_attempts(self) -> dict[str, tuple[int, datetime]]:
        """Per fact with an unrepaired failed index write: how many failures are recorded, and
        when the last one was (the embedding worker's attempts)."""
        ...


# -- what the platform reads about a store -----------------------------------------------------


class Inspection(Protocol):
    """Named reads for reports, asset checks and notebooks (never SQL outside the adapter)."""

    def summary(self) -> dict[str, Any]: ...

    def table_counts(self) -> dict[str, int]: ...

    def overlapping_intervals(self) -> list[dict[str, Any]]: ...

    def cross_tenant_rows(self) -> list[dict[str, Any]]: ...

    def unclassified_tables(self) -> list[str]: ...

    def catalog(self) -> list[tuple[str, str, str, str]]: ...

    def tenants(self) -> list[str]: ...

    def tenant_report(self, tenant: str) -> dict[str, Any]: ...

    def marker(self, name: str) -> str | None: ...

    def set_marker(self, name: str, value: str) -> None: ...

    def tables(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, sorted: two equal answers mean nothing was written between."""
        ...


class ApiKeyStore(Protocol):
    """The memory service's API keys (secrets hashed); each change audited."""

    def add(self, key: ApiKey, audit: AuditEntry) -> None: ...

    def find(self, key_id: str) -> ApiKey | None: ...

    def list(self, tenant: str | None = None) -> list[ApiKey]: ...

    def revoke(self, key_id: str, at: datetime, audit: AuditEntry) -> bool:
        """Mark the key revoked at ``at``; False when it is unknown or revoked already."""
        ...


class ChangeFeed(Protocol):
    """What a shared authority's other writers did: the audit chain's position (its newest seq)
    and the namespaces and ops of its rows after a position. Only an authority several processes
    write has one (``Store.feed``); an embedded home is its only writer and has none."""

    def position(self) -> int: ...

    def changed_since(self, position: int) -> list[tuple[str, str, str, str]]:
        """(tenant, scope, owner_id, op) of every audit row after ``position`` ('*' where a row
        names no one scope or owner)."""
        ...


class Store(Protocol):
    """The authoritative store of one memory home: its ports over one connection."""

    home: Path
    read_only: bool
    versions: VersionLog
    graph: GraphStore
    queue: WorkQueue
    ledger: ResolverLedger
    settings: TenantSettingsStore
    projections: ProjectionLedger
    inspection: Inspection
    api_keys: ApiKeyStore
    substrate: SubstrateStore
    erasure: ErasureStore
    webhooks: WebhookStore
    consolidation: ConsolidationStore
    dreams: DreamsStore
    communities: CommunityStore
    profiles: ProfileSchemaStore
    learnings: LearningsStore  # rules said about an agent, awaiting review
    observe: ObserveStore  # crystallized observation sessions (docs/extraction.md)
    categories: CategoryStore  # category taxonomy, category links, operator links (issue 26)
    namespaces: NamespaceStore  # soft-deleted namespaces, promotion lineage (issue 26)
    reflect: ReflectStore
    usage: UsageStore  # the usage fold's totals (docs/workers.md)
    lineage: LineageStore  # belief sources and session summaries (docs/retrieval.md)
    feed: ChangeFeed | None  # other processes' writes, where they can happen (docs/scaling.md)

    def close(self) -> None: ...
