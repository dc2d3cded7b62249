"""The Memory tool: one facade an agent (or a person, through the CLI) calls.

    with Memory.open(home, embedder="static") as memory:
        tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        tool.set("medication", "ibuprofen", valid_at="2024-03-01T00:00:00Z")
        tool.get("medication", as_of="2024-04-15T00:00:00Z")

Every op names a scope; the owner of the rows it touches comes from the run identity.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .audit import AuditReport
from .clock import Clock, SystemClock
from .document_ops import DocumentOps
from .embed import Embedder, make_embedder
from .errors import InvalidInput, NotFound
from .extraction.harvest import run_harvest_job
from .extraction.ops import ExtractionOps
from .extraction.pipeline import BUILTIN_STEPS, Step
from .extraction.queue import ExtractionQueueOps, run_extract_job, run_queue
from .extraction.rules import RuleExtractor
from .graph.ops import GraphOps
from .identity import Identity, Namespace, Scope
from .indexing import IndexProjector
from .lifecycle.expiry import decide_expiry, is_anonymized
from .lifecycle.flags import KeyOp
from .lifecycle.tool import LifecycleOps
from .model import VISIBLE_STATUSES, FactVersion, Kind, Provenance, WriteResult
from .projection import value_text
from .resolver.judge import RuleJudge
from .resolver.run import run_pass
from .retrieval import SearchResult
from .retrieval.search_api import run_search
from .review import ReviewOps
from .sql_memory import SqlMemory, SqlResult
from .store import DuckDBStore
from .store.lance_index import LanceIndex
from .store.port import KeyChange, WriteBatch
from .temporal import parse_instant
from .tenant_settings import TenantSettingsOps
from .timeline import FactState, fact_at
from .write.bulk import BulkResult, run_bulk
from .write.config import WriteConfig, config_from_stored
from .write.import_ops import ImportOps
from .write.peers import PeerVectors
from .write.point import WriteContext, after_write, audit_entry, run_set
from .write.settle import entry_request, make_request, validate_key

Instant = datetime | str | None

log = logging.getLogger(__name__)


def _new_id() -> str:
    return os.urandom(16).hex()  # a random 128-bit id, as uuid4 but without its object


class Memory:
    """An open memory home. Bind it to a run with ``for_run`` to get the tool.

    With an ``embedder`` the home also keeps the retrieval index (``lance/``) current, judges new
    facts against their peers and serves ``recall`` / ``search``; without one it is the
    authoritative store alone (writes are indexed the next time it is opened with one).
    """

    def __init__(
        self,
        store: DuckDBStore,
        clock: Clock | None = None,
        new_id: Callable[[], str] = _new_id,
        embedder: Embedder | None = None,
    ) -> None:
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self._new_id = new_id
        self.embedder = embedder
        self._projector: IndexProjector | None = None
        self._peers: PeerVectors | None = None
        self._configs: dict[str, WriteConfig] = {}
        self._closed = False
        self._sql: SqlMemory | None = None
        # The graph's single-valued relations are tenant settings; its ids come from the same factory.
        store.single_valued = lambda tenant: frozenset(self.write_config(tenant).tenant.single_valued)
        store.graph_new_id = new_id
        # Extraction: the offline rule-based extractor unless a model-backed one is given.
        self.extractor: Any = RuleExtractor()
        self.steps: dict[str, Step] = dict(BUILTIN_STEPS)

    def register_step(self, name: str, step: Step) -> None:
        """Make an operator's step available to ``set_from_messages(steps=[...])``."""
        if not isinstance(name, str) or not name.strip() or not callable(step):
            raise InvalidInput("a step needs a name and a callable (state, context) -> None", field="step")
        if name in BUILTIN_STEPS:
            raise InvalidInput(f"{name!r} is a built-in step", field="step")
        self.steps[name] = step

    @classmethod
    def open(
        cls,
        home: str | Path,
        *,
        clock: Clock | None = None,
        create: bool = True,
        read_only: bool = False,
        embedder: str | Embedder | None = None,
        new_id: Callable[[], str] = _new_id,
        **embedder_options: Any,
    ) -> "Memory":
        home = Path(home)
        store = DuckDBStore.open(home, create=create, read_only=read_only)
        if isinstance(embedder, str):
            embedder = make_embedder(embedder, cache_dir=home / "models", **embedder_options)
        return cls(store, clock, new_id, embedder=embedder)

    @property
    def home(self) -> Path:
        return self.store.path.parent

    def write_config(self, tenant: str) -> WriteConfig:
        if tenant not in self._configs:
            self._configs[tenant] = config_from_stored(self.store.write_configs(tenant))
        return self._configs[tenant]

    def _forget_config(self, tenant: str) -> None:
        self._configs.pop(tenant, None)

    def indexable(self, state: FactVersion) -> bool:
        """Does the index serve this state? Visible, not high, of an embedded type, not an anonymized shell."""
        if state.status.value not in VISIBLE_STATUSES or state.sensitivity == "high" or is_anonymized(state):
            return False
        return self.write_config(state.tenant).embedded(state.memory_type)

    @property
    def projector(self) -> IndexProjector:
        if self.embedder is None:
            raise InvalidInput(
                "this memory was opened without an embedder, so it has no retrieval index; "
                "open it with embedder='static' (or minilm, openai, hashing)"
            )
        if self._projector is None:
            index = LanceIndex(self.home / "lance", self.embedder.name, self.embedder.dim)
            if not self.store.read_only and index.upgrade_layout():
                log.info("the retrieval index gained its derived column live_span")
            self._projector = IndexProjector(self.store, index, self.embedder, self.clock, self.indexable)
        return self._projector

    def _peer_vectors(self) -> PeerVectors | None:
        if self.embedder is None:
            return None
        if self._peers is None:
            self._peers = PeerVectors(self.embedder.dim, self._load_peer_vectors)
        return self._peers

    def _load_peer_vectors(self, ns: Namespace) -> dict[str, tuple[str, Any]]:
        """The value vectors of a namespace's facts that can be peers, embedded once per process
        (later writes keep them current). Values only: a peer lives under another key."""
        facts = [
            s
            for states in self.store.namespace_states(ns).values()
            for s in states
            if s.kind is Kind.FACT and self.indexable(s)
        ]
        out: dict[str, tuple[str, Any]] = {}
        for start in range(0, len(facts), 4096):
            chunk = facts[start : start + 4096]
            vectors = self.embedder.embed([value_text(s.value) for s in chunk])
            out.update({s.fact_id: (s.key, v) for s, v in zip(chunk, vectors)})
        return out

    @property
    def sql(self) -> SqlMemory:
        """The per-scope SQL databases under ``<home>/sql/``."""
        if self._sql is None:
            self._sql = SqlMemory(self.home / "sql", read_only=self.store.read_only)
        return self._sql

    def write_context(self) -> WriteContext:
        return WriteContext(
            self.store,
            self.clock,
            self._new_id,
            self.write_config,
            self.embedder,
            self.projector if self.embedder is not None else None,
            self._peer_vectors(),
            lambda: getattr(self.embedder, "conflict_threshold", None),
        )

    def flush(self) -> int:
        """Write queued index changes now (reads do this themselves)."""
        return self.projector.flush() if self.embedder is not None else 0

    def repair_projections(self) -> int:
        """Write to the index every fact whose index write failed earlier."""
        return self.projector.repair()

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Rebuild the retrieval index from the authoritative store."""
        if self._peers is not None:
            self._peers.clear()
        return self.projector.reindex(progress=progress)

    def sweep_expired(self, *, actor: str = "worker:expiry-sweep") -> dict[str, int]:
        """Apply on_expire to every fact whose expires_at has passed. Returns counts by action."""
        now = self.clock.now()
        counts = {"tombstone": 0, "demote": 0, "anonymize": 0, "keys": 0}
        for ns, keys in self.store.expired_keys(now).items():
            changes, audits, rows = [], [], []
            with self.store.locked():
                for key in keys:
                    op = KeyOp(ns, key, tuple(self.store.fact_states(ns, key)), actor, now, self._new_id)
                    decision = decide_expiry(op)
                    if decision.rows:
                        changes.append(KeyChange(ns, key, decision.rows))
                        audits.append(audit_entry(ns, key, "expire", decision.rows, None, actor, op.created_at))
                        rows.extend(decision.rows)
                        for row in decision.rows:
                            counts[row.on_expire] += 1
                if changes:
                    self.store.apply(WriteBatch(tuple(changes), tuple(audits)))
            if changes:
                counts["keys"] += len(changes)
                after_write(self.write_context(), ns, rows, {})
        return counts

    def run_extraction_queue(
        self,
        *,
        worker: str | None = None,
        limit: int = 8,
        lease_s: float = 300.0,
        kinds: Sequence[str] = ("extract", "harvest"),
    ) -> dict[str, int]:
        """Lease up to ``limit`` due extraction jobs and run them; counts by outcome."""
        return run_queue(
            self,
            {"extract": run_extract_job, "harvest": run_harvest_job},
            worker=worker or f"worker-{os.getpid()}",
            limit=limit,
            lease_s=lease_s,
            kinds=kinds,
        )

    def resolve(self, judge: Any = None, settings: Any = None) -> Any:
        """One conflict-resolver pass: mark new statements, judge owed ones, act (see ``resolver``)."""
        if self.embedder is None:
            raise InvalidInput("the conflict resolver compares vectors: open the memory with an embedder")
        return run_pass(self, judge or RuleJudge(), settings)

    def for_run(self, identity: Identity, *, origin: str = "memory.api") -> "MemoryTool":
        return MemoryTool(self, identity, origin)

    def verify_audit(self) -> AuditReport:
        return self.store.verify_audit()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._projector is not None:
                self._projector.flush()
        finally:
            if self._sql is not None:
                self._sql.close()
            self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MemoryTool(
    LifecycleOps, TenantSettingsOps, DocumentOps, GraphOps, ExtractionOps, ExtractionQueueOps, ImportOps, ReviewOps
):
    """The Memory tool bound to one run identity."""

    def __init__(self, memory: Memory, identity: Identity, origin: str) -> None:
        self._memory = memory
        self._store = memory.store
        self.identity = identity
        self.origin = origin

    def _provenance(self, source_quote: str | None = None) -> Provenance:
        i = self.identity
        return Provenance(
            tenant=i.tenant,
            actor=i.actor,
            origin=self.origin,
            session=i.session,
            run=i.run,
            agent=i.agent,
            model=i.model,
            source_quote=source_quote,
        )

    def _now(self) -> datetime:
        return self._memory.clock.now()

    def _read_times(self, as_of: Instant, known_at: Instant) -> tuple[datetime, datetime | None]:
        known = parse_instant(known_at, "known_at")
        when = parse_instant(as_of, "as_of")
        # get(known_at=T) alone answers what get() answered at T.
        return (when or known or self._now()), known

    # -- writes --------------------------------------------------------------------------------

    def set(
        self, key: str, value: Any, *, scope: str | Scope = Scope.USER, dry_run: bool = False, **options: Any
    ) -> WriteResult:
        """State ``value`` under ``key``. A changed value supersedes; the same value reinforces.

        Options: kind, memory_type, valid_at, invalid_at, observed_at, subject (who the value is
        about or who said it), subject_type (the subject's entity type), relations (up to eight
        graph facts the value states: {subject, relation, object, valid_from?, valid_to?}),
        context (words that help find it without being its value), ttl_seconds, on_expire, pin,
        proposed, if_match_sha256, sensitivity, source_class, confidence. ``dry_run`` answers the
        verdict and writes nothing.

        ``scope="auto"`` places the fact by the tenant's ontology (``placement``): the row and
        its graph facts go to the decided scope in one transaction, and ``details["placement"]``
        says where and why.
        """
        placement = None
        if isinstance(scope, str) and scope == "auto":
            placement = self.place_fact(options.get("subject"), options.get("subject_type"))
            scope = placement.scope
        namespace = self.identity.namespace(scope)
        request = make_request(namespace, key, value, self._provenance(), self._now(), dry_run=dry_run, **options)
        result = run_set(self._memory.write_context(), request)
        if placement is not None:
            result = dataclasses.replace(result, details={**result.details, "placement": placement.to_dict()})
        return result

    def bulk_set(
        self, entries: Sequence[dict[str, Any]], *, scope: str | Scope = Scope.USER, dry_run: bool = False
    ) -> BulkResult:
        """Write many entries ({"key", "value", and any set option}) in one transaction: all or none.
        A locked or pinned key, a blacklisted or unchanged entry is skipped and reported."""
        namespace = self.identity.namespace(scope)
        if isinstance(entries, (str, bytes, dict)):
            raise InvalidInput("entries must be a list of objects", field="entries")
        now, provenance = self._now(), self._provenance()
        requests = [entry_request(namespace, i, e, provenance, now) for i, e in enumerate(entries)]
        return run_bulk(self._memory.write_context(), requests, dry_run=dry_run)

    # -- SQL memory ----------------------------------------------------------------------------

    def sql_exec(
        self, statement: str, params: Sequence[Any] | dict[str, Any] | None = None, *, scope: str | Scope = Scope.USER
    ) -> SqlResult:
        """Run one statement (tables, inserts, updates, queries) on the scope's SQL database, in
        its own transaction. Needs the ``sql_scopes`` grant for the scope."""
        return self._memory.sql.run(self.identity.sql_namespace(scope), statement, params, query_only=False)

    def sql_query(
        self, statement: str, params: Sequence[Any] | dict[str, Any] | None = None, *, scope: str | Scope = Scope.USER
    ) -> SqlResult:
        """Run one read-only statement (SELECT, EXPLAIN); ``.to_polars()`` gives a frame."""
        return self._memory.sql.run(self.identity.sql_namespace(scope), statement, params, query_only=True)

    # -- reads ---------------------------------------------------------------------------------

    def get(
        self, key: str, *, scope: str | Scope = Scope.USER, as_of: Instant = None, known_at: Instant = None
    ) -> FactVersion | None:
        """The fact live at ``as_of`` (default now) as the store believed it at ``known_at``.
        An expired fact is hidden at once, before the sweep records it."""
        key = validate_key(key)
        namespace = self.identity.namespace(scope)
        when, known = self._read_times(as_of, known_at)
        now = self._now()
        states = [
            s
            for s in self._store.fact_states(namespace, key, known)
            if s.status.value in VISIBLE_STATUSES and not s.expired(now)
        ]
        found = fact_at([FactState(s.fact_id, s.content_sha256, s.valid_at, s.invalid_at) for s in states], when)
        return None if found is None else next(s for s in states if s.fact_id == found.fact_id)

    def list(
        self, *, scope: str | Scope = Scope.USER, as_of: Instant = None, known_at: Instant = None
    ) -> list[FactVersion]:
        """Every key of the scope with a fact live at ``as_of``, ordered by key."""
        namespace = self.identity.namespace(scope)
        when, known = self._read_times(as_of, known_at)
        now = self._now()
        return [s for s in self._store.live_facts(namespace, when, known) if not s.expired(now)]

    def history(self, key: str, *, scope: str | Scope = Scope.USER) -> list[FactVersion]:
        """Every version row of ``key`` in this scope, oldest first."""
        key = validate_key(key)
        namespace = self.identity.namespace(scope)
        rows = self._store.history(namespace, key)
        if not rows:
            raise NotFound(f"no history: no key {key!r} in scope {namespace.scope.value}", key=key)
        return rows

    def recall(
        self,
        query: str,
        *,
        scope: str | Scope = Scope.USER,
        k: int = 10,
        recipe: str = "hybrid_rrf",
        as_of: Instant = None,
        sources: Iterable[str | Kind] | None = None,
        observed_from: Instant = None,
        observed_to: Instant = None,
        token_budget: int | None = None,
        participants: Iterable[str] = (),
    ) -> SearchResult:
        """What have I been told about ``query``? Facts and notes by default.

        ``participants`` names the people of a conversation: the semantic leg ignores their names,
        and a recipe with a subject prior favours rows of the one participant the query names.
        """
        return run_search(
            self,
            query,
            scope=scope,
            k=k,
            recipe=recipe,
            as_of=as_of,
            sources=sources if sources is not None else (Kind.FACT, Kind.NOTE),
            observed_from=observed_from,
            observed_to=observed_to,
            token_budget=token_budget,
            participants=participants,
        )

    def search(
        self,
        query: str,
        *,
        scope: str | Scope = Scope.USER,
        k: int = 10,
        recipe: str = "hybrid_rrf",
        as_of: Instant = None,
        sources: Iterable[str | Kind] | None = None,
        observed_from: Instant = None,
        observed_to: Instant = None,
        token_budget: int | None = None,
        participants: Iterable[str] = (),
    ) -> SearchResult:
        """Where did I record ``query``? Every plane by default; ``sources`` narrows it."""
        return run_search(
            self,
            query,
            scope=scope,
            k=k,
            recipe=recipe,
            as_of=as_of,
            sources=sources if sources is not None else tuple(Kind),
            observed_from=observed_from,
            observed_to=observed_to,
            token_budget=token_budget,
            participants=participants,
        )
