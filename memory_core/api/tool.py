"""``MemoryTool``: the Memory tool bound to one run identity, as delegations to the services. Every
op names a scope; the owner of the rows it touches comes from the identity, never an argument."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterable, Sequence, TypeVar

from ..documents import Document, DocumentSummary
from ..graph.answers import GraphFact, GraphRecall
from ..identity import Identity, Scope
from ..lifecycle.history import RollbackPlan
from ..model import FactVersion, Kind, Op, WriteResult
from ..ports import SqlParams, SqlResult
from ..retrieval.answer import Answer
from ..retrieval.recipes import DEFAULT_RECIPE
from ..retrieval.traces import SearchTrace
from ..retrieval.types import SearchResult
from ..services.ask import AskService
from ..services.documents import DocumentsService
from ..services.extraction import ExtractionService
from ..services.graph import GraphService
from ..services.lifecycle import LifecycleService
from ..services.reads import ReadsService
from ..services.review import ReviewDecision, ReviewItem, ReviewService
from ..services.sql import SqlService
from ..services.writes import WritesService
from ..temporal import Instant
from ..write.batch import BulkResult
from . import compounding, dreams, extraction_ops, profiles, remember, settings_ops
from .boundary import own_arguments
from .validate import TOOL_RULES, guard_ops

if TYPE_CHECKING:
    from .memory import Memory

S = TypeVar("S")


@guard_ops(TOOL_RULES)  # every argument is checked before the op runs (api/validate.py)
class MemoryTool:
    """The Memory tool bound to one run identity."""

    def __init__(self, memory: Memory, identity: Identity, origin: str) -> None:
        self._memory = memory
        self.identity = identity
        self.origin = origin
        session = memory.session
        self._writes = WritesService(session, identity, origin)
        self._reads = ReadsService(session, identity, origin)
        self._search = AskService(session, identity, origin)
        self._lifecycle = LifecycleService(session, identity, origin)
        self._documents = DocumentsService(session, identity, origin)
        self._graph = GraphService(session, identity, origin)
        self._extraction = ExtractionService(session, identity, origin)
        self._review = ReviewService(session, identity, origin)
        self._sql = SqlService(session, identity, origin)

    # -- writes --------------------------------------------------------------------------------
    def set(
        self,
        key: str,
        value: Any,
        *,
        scope: str | Scope = Scope.USER,
        dry_run: bool = False,
        kind: str | Kind = Kind.FACT,
        memory_type: str = "general",
        valid_at: Instant = None,
        invalid_at: Instant = None,
        observed_at: Instant = None,
        subject: str | None = None,
        subject_type: str | None = None,
        relations: Sequence[Any] | None = None,
        context: str | None = None,
        ttl_seconds: float | None = None,
        on_expire: str | None = None,
        pin: bool = False,
        proposed: bool = False,
        if_match_sha256: str | None = None,
        sensitivity: str | None = None,
        source_class: str | None = None,
        confidence: float | None = None,
        source_quote: str | None = None,
        source_turn: str | None = None,
        source_span: Sequence[int] | None = None,
        compaction_generation: int | None = None,
    ) -> WriteResult:
        """State ``value`` under ``key``. A changed value supersedes; the same value reinforces.

        The options are the write path's (``docs/write-path.md``): time (``valid_at``,
        ``invalid_at`` may be in the future, ``observed_at``), who it is about (``subject``,
        ``subject_type``), up to eight graph ``relations`` it states ({subject, relation, object,
        valid_at?, invalid_at?} or [s, r, o]), ``context`` words, expiry (``ttl_seconds``,
        ``on_expire``), ``pin``, ``proposed``, ``if_match_sha256``, ``sensitivity`` (raise only),
        ``source_class`` (downgrade only), ``confidence`` and where in a transcript it was read.
        ``dry_run`` answers the verdict and writes nothing. ``scope="auto"`` places the fact by
        the tenant's ontology; ``details["placement"]`` says where and why."""
        return self._writes.set(**own_arguments(locals()))

    def bulk_set(
        self, entries: Sequence[dict[str, Any]], *, scope: str | Scope = Scope.USER, dry_run: bool = False
    ) -> BulkResult:
        """Write many entries ({"key", "value", and any set option}) in one transaction: all or none.
        A malformed entry refuses the batch (``details["entry"]`` is its index); a locked or pinned
        key, a blacklisted or unchanged entry is skipped and reported."""
        return self._writes.bulk_set(entries, scope=scope, dry_run=dry_run)

    def import_items(
        self, items: Sequence[Any], *, scope: str | Scope = Scope.USER, dry_run: bool = False
    ) -> BulkResult:
        """Import texts (strings, or {"text", valid_at, observed_at, kind, memory_type, subject, ...})
        under digest keys (``import:`` + 24 hex), oldest first. A key already holding the text is
        unchanged, one whose newest version is not live is left as it is; a re-run reinforces nothing."""
        return self._writes.import_items(items, scope=scope, dry_run=dry_run)

    # -- reads ---------------------------------------------------------------------------------
    def get(
        self, key: str, *, scope: str | Scope = Scope.USER, as_of: Instant = None, known_at: Instant = None
    ) -> FactVersion | None:
        """The fact live at ``as_of`` (default now) as the store believed it at ``known_at``.
        An expired fact is hidden at once, before the sweep records it."""
        return self._reads.get(key, scope=scope, as_of=as_of, known_at=known_at)

    def list(
        self, *, scope: str | Scope = Scope.USER, as_of: Instant = None, known_at: Instant = None
    ) -> list[FactVersion]:
        """Every key of the scope with a fact live at ``as_of``, ordered by key."""
        return self._reads.list(scope=scope, as_of=as_of, known_at=known_at)

    def history(self, key: str, *, scope: str | Scope = Scope.USER) -> list[FactVersion]:
        """Every version row of ``key`` in this scope, oldest first."""
        return self._reads.history(key, scope=scope)

    def recall(
        self,
        query: str,
        *,
        scope: str | Scope = Scope.USER,
        k: int = 10,
        recipe: str = DEFAULT_RECIPE,
        as_of: Instant = None,
        sources: Iterable[str | Kind] | None = None,
        observed_from: Instant = None,
        observed_to: Instant = None,
        token_budget: int | None = None,
        participants: Iterable[str] = (),
        cursor: str | None = None,
    ) -> SearchResult:
        """What have I been told about ``query``? Facts and notes by default. ``participants``
        (default: the scope's speakers) leave the embedded query and weigh the one it names;
        ``cursor`` (a result's ``next_cursor``) pages through the ranking the search kept."""
        return self._search.recall(**own_arguments(locals()))

    def search(
        self,
        query: str,
        *,
        scope: str | Scope = Scope.USER,
        k: int = 10,
        recipe: str = DEFAULT_RECIPE,
        as_of: Instant = None,
        sources: Iterable[str | Kind] | None = None,
        observed_from: Instant = None,
        observed_to: Instant = None,
        token_budget: int | None = None,
        participants: Iterable[str] = (),
        cursor: str | None = None,
    ) -> SearchResult:
        """Where did I record ``query``? Every plane by default; ``sources`` narrows it."""
        return self._search.search(**own_arguments(locals()))

    def search_trace(self, trace_id: str, *, scope: str | Scope = Scope.USER) -> SearchTrace:
        """How a recent search in this scope answered: its plan, each leg's candidates and
        scores, the fusion's terms, the filters and the verdict (kept 15 minutes)."""
        return self._search.trace(trace_id, scope=scope)

    def ask(
        self,
        question: str,
        *,
        scope: str | Scope = Scope.USER,
        k: int = 10,
        recipe: str = DEFAULT_RECIPE,
        as_of: Instant = None,
        participants: Iterable[str] = (),
    ) -> Answer:
        """Answer ``question`` through the memory's language model from what ``recall`` finds, citing the
        hits it rests on; ``reason`` says why it abstained (the search did, the model did, no citation)."""
        return self._search.ask(**own_arguments(locals()))

    # -- SQL memory ----------------------------------------------------------------------------
    def sql_exec(self, statement: str, params: SqlParams = None, *, scope: str | Scope = Scope.USER) -> SqlResult:
        """Run one statement (tables, inserts, updates, queries) on the scope's SQL database, in
        its own transaction. Needs the ``sql_scopes`` grant for the scope."""
        return self._sql.run(statement, params, scope=scope, query_only=False)

    def sql_query(self, statement: str, params: SqlParams = None, *, scope: str | Scope = Scope.USER) -> SqlResult:
        """Run one read-only statement (SELECT, EXPLAIN); ``.to_polars()`` gives a frame."""
        return self._sql.run(statement, params, scope=scope, query_only=True)

    # -- lifecycle -----------------------------------------------------------------------------
    def delete(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Tombstone the key: reads stop seeing it, history keeps it, ``restore`` brings it back."""
        return self._lifecycle.delete(key, scope=scope)

    def delete_version(self, key: str, version: int, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Delete the key only while ``version`` (as read) is still its head; otherwise the verdict
        is ``version_changed`` and nothing is written."""
        return self._lifecycle.delete_version(key, version, scope=scope)

    def restore(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Undo the latest delete, reject, expiry or retirement of ``key``."""
        return self._lifecycle.restore(key, scope=scope)

    def lock(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Refuse every change of value (423) until unlocked."""
        return self._lifecycle.flag(key, scope=scope, kind=Op.LOCK)

    def unlock(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        return self._lifecycle.flag(key, scope=scope, kind=Op.UNLOCK)

    def pin(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Refuse a changed value (409) unless the write pins too, and refuse close peers of it."""
        return self._lifecycle.flag(key, scope=scope, kind=Op.PIN)

    def unpin(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        return self._lifecycle.flag(key, scope=scope, kind=Op.UNPIN)

    def promote(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Accept a proposal as an established fact."""
        return self._lifecycle.flag(key, scope=scope, kind=Op.PROMOTE)

    def demote(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Make an established fact a proposal again, with half its confidence and no expiry."""
        return self._lifecycle.flag(key, scope=scope, kind=Op.DEMOTE)

    def reject(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Mark the live fact wrong: hidden from reads, kept in history, undone by restore."""
        return self._lifecycle.flag(key, scope=scope, kind=Op.REJECT)

    def redact(self, key: str, version_id: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Scrub one historical version's value (and its copies) in place; never the live head."""
        return self._lifecycle.redact(key, version_id, scope=scope)

    def snapshot(self, *, scope: str | Scope = Scope.USER) -> dict[str, Any]:
        """The scope's live facts as a portable payload (format, snapshot_id, rows, content_sha256)."""
        return self._lifecycle.snapshot(scope=scope)

    def restore_snapshot(self, payload: Any, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Write a snapshot's facts into this scope (once per snapshot_id: then ``already_restored``)."""
        return self._lifecycle.restore_snapshot(payload, scope=scope)

    def rollback(self, to: datetime | str, *, scope: str | Scope = Scope.USER, apply: bool = False) -> RollbackPlan:
        """Put every key of the scope back to what the store held at ``to``: a new version per
        changed fact, keys absent then tombstoned. A dry run (the default) returns the plan only."""
        return self._lifecycle.rollback(to, scope=scope, apply=apply)

    # -- documents and the graph ---------------------------------------------------------------
    def doc_put(
        self,
        doc_key: str,
        body: str,
        *,
        metadata: dict[str, Any] | None = None,
        title: str | None = None,
        scope: str | Scope = Scope.USER,
        valid_at: Instant = None,
        observed_at: Instant = None,
    ) -> WriteResult:
        """Store a Markdown document as chunks (searchable as kind ``document``). Metadata with
        ``subject``, ``entity_type`` and ``fact_class`` makes its chunks entity chunks."""
        return self._documents.doc_put(**own_arguments(locals()))

    def doc_get(
        self, doc_key: str, *, scope: str | Scope = Scope.USER, as_of: Instant = None, known_at: Instant = None
    ) -> Document | None:
        """The document at ``as_of`` (as known at ``known_at``): title, metadata, body and chunks."""
        return self._documents.doc_get(doc_key, scope=scope, as_of=as_of, known_at=known_at)

    def doc_list(self, *, scope: str | Scope = Scope.USER, as_of: Instant = None) -> list[DocumentSummary]:
        """Every document of the scope live at ``as_of``."""
        return self._documents.doc_list(scope=scope, as_of=as_of)

    def doc_delete(self, doc_key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Tombstone the document and all its chunks in one transaction (history keeps them)."""
        return self._documents.doc_delete(doc_key, scope=scope)

    def list_facts(
        self, subject: str, *, scope: str | Scope = Scope.USER, as_of: Instant = None, relation: str | None = None
    ) -> list[GraphFact]:
        """The triples about ``subject`` current at ``as_of`` (default now), by relation."""
        return self._graph.list_facts(subject, scope=scope, as_of=as_of, relation=relation)

    def graph_recall(
        self, entity: str, *, scope: str | Scope = Scope.USER, hops: int = 1, as_of: Instant = None
    ) -> GraphRecall:
        """What the graph holds around ``entity`` at ``as_of``: every current triple within ``hops``
        (1 to 3) of it, the entities reached with their types, and the documents filed about them."""
        return self._graph.graph_recall(entity, scope=scope, hops=hops, as_of=as_of)

    # -- extraction (api/extraction_ops.py) -------------------------------------------------------
    set_from_messages = extraction_ops.set_from_messages
    enqueue_extraction = extraction_ops.enqueue_extraction
    extraction_status = extraction_ops.extraction_status
    extraction_queue_status = extraction_ops.extraction_queue_status
    retry_extraction = extraction_ops.retry_extraction

    # -- review --------------------------------------------------------------------------------
    def review_queue(self, *, scope: str | Scope = Scope.USER) -> list[ReviewItem]:
        """The scope's conflicted rows, each with its flagged peers and what judges said of them."""
        return self._review.review_queue(scope=scope)

    def resolve_conflict(
        self, key: str, peer_key: str, decision: str, *, scope: str | Scope = Scope.USER
    ) -> ReviewDecision:
        """A reviewer's decision on a flagged pair: ``retire_peer`` (the peer is stale) or ``clear``
        (both stand); audited and recorded, and ``restore`` undoes a retirement."""
        return self._review.resolve_conflict(key, peer_key, decision, scope=scope)

    # -- the tenant's settings (api/settings_ops.py) ---------------------------------------------
    configure = settings_ops.configure
    configure_type = settings_ops.configure_type
    ontology_set = settings_ops.ontology_set
    ontology_get = settings_ops.ontology_get
    placement = settings_ops.placement
    place_fact = settings_ops.place_fact
    known_types = settings_ops.known_types

    # -- remember: lenses, frames, captures, decisions, views, events, receipts (api/remember.py) -
    lens_define = remember.lens_define
    lens_expire = remember.lens_expire
    lens_assign = remember.lens_assign
    lens_unassign = remember.lens_unassign
    permission_group_define = remember.permission_group_define
    lens_roster_load = remember.lens_roster_load
    lenses = remember.lenses
    frame_open = remember.frame_open
    frame_update = remember.frame_update
    frame_close = remember.frame_close
    frame_get = remember.frame_get
    frame_history = remember.frame_history
    frames = remember.frames
    capture = remember.capture
    decide = remember.decide
    decision_outcome = remember.decision_outcome
    render = remember.render
    get_context = remember.get_context
    retrieval_feedback = remember.retrieval_feedback
    events = remember.events
    receipt_keys = remember.receipt_keys
    verify_receipt = remember.verify_receipt
    # -- consolidation (api/compounding.py) -------------------------------------------------------
    consolidate = compounding.consolidate
    consolidation_undo = compounding.consolidation_undo
    consolidation_runs = compounding.consolidation_runs
    lineage = compounding.lineage
    # -- Dreams: proposals that wait for approval (api/dreams.py) ----------------------------------
    dream = dreams.dream
    dream_proposals = dreams.dream_proposals
    dream_approve = dreams.dream_approve
    dream_reject = dreams.dream_reject
    # -- structured profiles (api/profiles.py) -----------------------------------------------------
    profile_schema_set = profiles.profile_schema_set
    profile_schema = profiles.profile_schema
    profile = profiles.profile
    # -- the seed's surface (issue 26) -----------------------------------------------------------

    def _bound(self, service: type[S]) -> S:
        """A service bound to this run (for the ops listed from sibling modules)."""
        return service(self._memory.session, self.identity, self.origin)
