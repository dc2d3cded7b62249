"""The session: one process's ports on a memory home, and the one commit every write goes through.

**The lock rule.** A write holds ``session.locked()`` from its first read of the rows it decides
on until its commit returns. ``commit`` itself takes the lock too (it is re-entrant), and under
it does, in this order: the graph follow (read, decided by pure functions, carried as data), the
transaction (version rows, graph writes, audit rows; all or nothing), and the index's part:
queuing the changed states (or, for a batch, writing them with its staged rows) and the peer
vectors. So the index queue and the peer cache always follow the log in commit order. Reads that
need the index to be current (a search) flush the queue themselves; the index write of a point
write happens there, or when the queue grows long, never inside the transaction. ``redact`` too.
Over a shared authority the lock first catches up with the other writers (``follow``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from typing import Callable, ContextManager, Iterable, Mapping

import numpy as np

from ..audit import AuditEntry
from ..errors import InvalidInput
from ..extraction.pipeline import ExtractionSettings
from ..extraction.rules import RuleExtractor
from ..identity import Identity, Namespace, Scope
from ..lifecycle.expiry import is_anonymized
from ..lifecycle.history import REDACTED_JSON
from ..model import VISIBLE_STATUSES, FactVersion, Kind
from ..ports import (
    LLM,
    Clock,
    Embedder,
    HomeFiles,
    IdFactory,
    IndexSink,
    KeyChange,
    NewRows,
    ReceiptKeyring,
    SearchIndex,
    SqlDatabases,
    StagedRows,
    Store,
    SubstrateRecord,
    TokenCounter,
    WriteBatch,
)
from ..retrieval.calibration import Calibration
from ..substrate.events import EventContext, StateChange, redaction_event
from ..write.conversation import context_of
from ..write.peers import PeerVectors
from ..write.tenant_config import WriteConfig, config_from_stored
from .conversations import Conversations
from .entities import GraphEntities
from .events import write_events
from .follow import follow_authority, index_opening
from .graph import follow_graph
from .holds import refuse_held
from .peer_cache import keep_peers, peer_vectors_of
from .search_memo import SearchMemo

IndexPorts = tuple[IndexSink, SearchIndex]


def key_changes(namespace: Namespace, rows: Iterable[FactVersion]) -> tuple[KeyChange, ...]:
    """``rows`` grouped by key, keys in the order they first appear, rows in theirs."""
    by_key: dict[str, list[FactVersion]] = {}
    for row in rows:
        by_key.setdefault(row.key, []).append(row)
    return tuple(KeyChange(namespace, key, tuple(group)) for key, group in by_key.items())


@dataclass(frozen=True)
class Commit:
    """One write, decided: the rows it appends by key, its audit rows, and what the index and the
    peer cache gain (vectors the write already computed, by fact id).

    A batch also gives ``staged`` (its fresh entries as columns), ``before_commit`` (waited on
    inside the transaction: if it raises nothing is written), ``landed`` (its vectors, known once
    a worker finished them beside the insert) and ``new_rows`` (the index rows of the staged
    facts): with ``new_rows`` the index write happens in the commit, beside the work they
    carry."""

    changes: tuple[KeyChange, ...]
    audits: tuple[AuditEntry, ...]
    index_vectors: Mapping[str, np.ndarray] = field(default_factory=dict)
    peer_vectors: Mapping[str, np.ndarray] = field(default_factory=dict)
    landed: Callable[[], tuple[Mapping[str, np.ndarray], Mapping[str, np.ndarray]]] | None = None
    snapshot: tuple[str, int] | None = None
    staged: StagedRows | None = None
    before_commit: Callable[[], None] | None = None
    new_rows: NewRows | None = None
    # The substrate's part: what its events say beyond its rows (``context``), the events when it
    # appends no version row (``events``; None: one per audit entry), the records it keeps.
    context: EventContext = EventContext()
    events: tuple[StateChange, ...] | None = None
    records: tuple[SubstrateRecord, ...] = ()

    @property
    def rows(self) -> tuple[FactVersion, ...]:
        return tuple(r for c in self.changes for r in c.rows)


class RunService:
    """A service bound to one run: the session's ports, the run's identity, and the origin its
    writes record in their provenance."""

    def __init__(self, session: Session, identity: Identity, origin: str) -> None:
        self.session, self.identity, self.origin = session, identity, origin


class Session:
    """The ports of one open home. Built by ``Memory.open``; services get it, never a ``Memory``."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        new_id: IdFactory,
        embedder: Embedder | None = None,
        *,
        open_index: Callable[[Session], IndexPorts] | None = None,
        open_sql: Callable[[], SqlDatabases] | None = None,
        extraction: ExtractionSettings | None = None,
        receipts: ReceiptKeyring | None = None,
        tokens: TokenCounter | None = None,
        files: HomeFiles | None = None,
    ) -> None:
        self.store = store
        self.files = files  # the home's files, as an erasure sees them
        self.versions = store.versions
        self.graph = store.graph
        self.queue = store.queue
        self.ledger = store.ledger
        self.settings = store.settings
        self.projections = store.projections
        self.clock = clock
        self.new_id = new_id
        self.embedder = embedder
        self.extraction = extraction or ExtractionSettings(RuleExtractor())
        self._open_index = open_index
        self._open_sql = open_sql
        self._index: IndexPorts | None = None
        self._sql: SqlDatabases | None = None
        self._peers: PeerVectors | None = None
        self._configs: dict[str, WriteConfig] = {}
        self.searches = SearchMemo()
        # Relevance calibrations by (embedder name, recipe name): Memory.open reads the home's.
        self.relevance: dict[tuple[str, str], Calibration] = {}
        self.llm: LLM | None = None  # what ``ask`` answers through (none: ``ask`` is refused)
        self.receipt_keys = receipts  # signs disclosure receipts (remember's render, context, capture)
        self.tokens = tokens  # what a context's token budget is counted with
        self.conversations = Conversations(self.versions.session_notes, self._session_notes_now, self.indexable)
        self.entities = GraphEntities(self.graph.entity_names)
        # Members built on first use are built once, whichever thread asks first.
        self._building = threading.Lock()
        self.erasing = threading.RLock()  # one erasure saga at a time in this process
        self.follower = follow_authority(self)  # other processes' writes (a shared authority)

    # -- members built on first use ----------------------------------------------------------

    @property
    def has_index(self) -> bool:
        return self.embedder is not None and self._open_index is not None

    def _index_ports(self) -> IndexPorts:
        if not self.has_index:
            raise InvalidInput(
                "this memory was opened without an embedder, so it has no retrieval index; "
                "open it with embedder='static' (or minilm, openai, hashing)"
            )
        if self._index is None:
            with index_opening(self), self._building:
                if self._index is None:
                    self._index = self._open_index(self)
        return self._index

    @property
    def index(self) -> IndexSink | None:
        """The retrieval index's sink; None for a home opened without an embedder."""
        return self._index_ports()[0] if self.has_index else None

    def require_index(self) -> IndexSink:
        """The retrieval index's sink, or the typed refusal of a home opened without an embedder."""
        return self._index_ports()[0]

    @property
    def search_index(self) -> SearchIndex:
        return self._index_ports()[1]

    @property
    def built_index(self) -> IndexSink | None:
        """The sink if something already used it (closing need not open an index to flush nothing)."""
        return self._index[0] if self._index is not None else None

    @property
    def sql(self) -> SqlDatabases:
        if self._sql is None:
            with self._building:
                if self._sql is None:
                    if self._open_sql is None:
                        raise InvalidInput("this memory has no SQL memory")
                    self._sql = self._open_sql()
        return self._sql

    @property
    def built_sql(self) -> SqlDatabases | None:
        return self._sql

    @property
    def peers(self) -> PeerVectors | None:
        """The value vectors a peer check compares with (None without an embedder)."""
        if self.embedder is None:
            return None
        if self._peers is None:
            with self._building:
                if self._peers is None:
                    # Under the store's lock: a namespace loading while a commit puts into it
                    # would otherwise miss that commit's vectors (see ``write.peers``).
                    self._peers = PeerVectors(
                        self.embedder.dim, partial(peer_vectors_of, self), locked=self.versions.locked
                    )
        return self._peers

    def forget_peers(self) -> None:
        if self._peers is not None:
            self._peers.clear()

    @property
    def receipts(self) -> ReceiptKeyring:
        if self.receipt_keys is None:
            raise InvalidInput("this memory was opened without a receipt keyring: it cannot sign receipts")
        return self.receipt_keys

    # -- tenant write settings -----------------------------------------------------------------

    def write_config(self, tenant: str) -> WriteConfig:
        found = self._configs.get(tenant)
        if found is None:
            # Read and kept under the store's lock, which a settings write holds too: a config read
            # before a change can never be kept after the change's ``forget_config``.
            with self.versions.locked():
                found = self._configs.get(tenant)
                if found is None:
                    found = self._configs[tenant] = config_from_stored(self.settings.write_configs(tenant))
        return found

    def forget_config(self, tenant: str) -> None:
        with self.versions.locked():
            self._configs.pop(tenant, None)

    def single_valued(self, tenant: str) -> frozenset[str]:
        return frozenset(self.write_config(tenant).tenant.single_valued)

    def indexable(self, state: FactVersion) -> bool:
        """Does the index serve this state? Visible, not high, of an embedded type, not an anonymized
        shell nor a redacted row."""
        if state.status.value not in VISIBLE_STATUSES or state.sensitivity == "high" or is_anonymized(state):
            return False
        if state.value_json == REDACTED_JSON:  # ``redact`` made the index forget it: never served again
            return False
        return self.write_config(state.tenant).embedded(state.memory_type)

    def head_version(self, namespace: Namespace, key: str) -> int:
        """The key's newest stored version number (0: none)."""
        return head.version if (head := self.versions.head(namespace, key)) else 0

    def conversation_context(self, namespace: Namespace, session: str) -> str | None:
        """The index context of the next note ``session`` writes in ``namespace``: the words of
        the notes it wrote just before (``write.conversation``)."""
        with self.versions.locked():
            said = self.conversations.tail(namespace, session)
            return context_of([s for s in said if self._serves(namespace, s.key, s.fact_id)])

    def _serves(self, namespace: Namespace, key: str, fact_id: str) -> bool:
        """Does the index serve this fact now? (A note deleted, made high or redacted since it
        was said lends no words.)"""
        state = self.versions.fact_state(namespace, key, fact_id)
        return state is not None and self.indexable(state)

    def _session_notes_now(self, namespace: Namespace) -> list[FactVersion]:
        """The latest state of every note a run session wrote in ``namespace`` (from the log's
        cached states)."""
        return [
            state
            for states in self.versions.namespace_states(namespace).values()
            for state in states
            if state.kind is Kind.NOTE and state.provenance.session is not None
        ]

    def graph_entities(self, namespace: Namespace) -> frozenset[str]:
        """The entity names of the namespace's graph (``session.entities``)."""
        return self.entities.of(namespace, self.versions.locked)

    def speakers(self, namespace: Namespace) -> frozenset[str]:
        """Who speaks in the namespace's conversations: the subjects of the notes run sessions wrote."""
        return self.conversations.speakers(namespace, self.versions.locked)

    def calibration(self, tenant: str | None = None) -> float | None:
        """The embedder's own conflict threshold when it declares one, else the one recalibration
        measured for ``tenant`` under this embedder (docs/workers.md)."""
        declared = getattr(self.embedder, "conflict_threshold", None)
        if declared is not None or tenant is None or self.embedder is None:
            return declared
        return self.write_config(tenant).tenant.measured_threshold(self.embedder.name)

    def relevance_calibration(self, recipe: str) -> Calibration | None:
        """What maps a hit of ``recipe`` under this home's embedder to P(relevant), if fitted."""
        return None if self.embedder is None else self.relevance.get((self.embedder.name, recipe))

    # -- the one commit ------------------------------------------------------------------------

    def refuse_read_only(self, what: str) -> None:
        """The typed refusal of a write on a home opened read-only."""
        if self.store.read_only:
            raise InvalidInput(f"this memory home is open read-only: {what}")

    def locked(self) -> ContextManager[None]:
        return self.versions.locked() if self.follower is None else self.follower.locked()

    def commit(self, write: Commit) -> None:
        """Apply one decided write (see the module's lock rule)."""
        rows = write.rows
        with self.locked():
            # Opened before the transaction: an index that cannot be opened (another embedder's)
            # refuses the write, and an index opened now starts its watermark before these rows.
            # Lazily: with no erasure under way (nearly always), no namespace is built.
            held_here = chain(
                (Namespace(r.tenant, r.scope, r.owner_id) for r in rows),
                (Namespace(e.tenant, Scope(e.scope), e.owner_id) for e in write.events or ()),  # records
            )
            refuse_held(self.store, held_here)
            index = self.index
            graph = follow_graph(self, rows)
            self.versions.apply(
                WriteBatch(
                    write.changes,
                    write.audits,
                    graph,
                    write_events(self.versions, self.new_id, write, rows, graph),
                    write.records,
                ),
                snapshot=write.snapshot,
                before_commit=write.before_commit,
                staged=write.staged,
            )
            if self.follower is not None:
                self.follower.committed_here()
            self.entities.noted(graph)  # at once: what follows may raise, the graph rows stand
            index_vectors, peer_vectors = write.landed() if write.landed else (write.index_vectors, write.peer_vectors)
            if index is not None:
                index.enqueue(rows, index_vectors, hold=write.new_rows is not None)
                if write.new_rows is not None:
                    index.flush(write.new_rows)
            elif write.new_rows is not None:
                write.new_rows.done()
            keep_peers(self.peers, rows, peer_vectors, write.new_rows)
            if write.staged is None:
                self.conversations.noted(rows)
            else:  # a batch's fresh entries are columns: its sessions' tails are read anew
                self.conversations.forget()

    def redact(
        self,
        rows: tuple[FactVersion, ...],
        value_json: str,
        content_sha256: str,
        audit: AuditEntry,
        requoted: tuple[FactVersion, ...] = (),
    ) -> None:
        """The one write that is not an append: overwrite these rows' value in the log, and make the
        index and the peer cache forget them (under the lock, as a commit). ``requoted``: rows of
        the notes that quoted them, stored and indexed again with their new context."""
        with self.versions.locked():
            refuse_held(self.store, (Namespace(r.tenant, r.scope, r.owner_id) for r in rows))
            event = redaction_event(audit, rows, content_sha256, self.new_id())
            self.versions.redact(rows, value_json, content_sha256, audit, requoted, (event,))
            self.conversations.forget()
            self.entities.forget()
            self.searches.forget()  # a kept page or trace must never show what was redacted
            index = self.index
            if index is not None:
                # A requoted note's row keeps its version: it is dropped and written again.
                requoting = sorted({r.fact_id for r in requoted})
                try:
                    index.forget(sorted({r.fact_id for r in rows}.union(requoting)))
                    if requoting:
                        index.enqueue(self.versions.latest_states(requoting))
                except BaseException as exc:
                    # Their versions did not change, so no check would find the stale words:
                    # recorded, repair writes them again. The failure still reaches the caller.
                    if requoting:
                        states = self.versions.latest_states(requoting)
                        self.projections.record_projection_failure(states, f"redaction: {exc}", self.clock.now())
                    raise
                finally:
                    self.searches.forget()  # nor one a search kept while the index was changing
                self.forget_peers()
