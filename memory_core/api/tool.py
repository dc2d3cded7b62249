"""``MemoryTool``: the Memory tool bound to one run identity, as delegations to the services. Every
op names a scope; the owner of the rows it touches comes from the identity, never an argument."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence, TypeVar

from ..documents import Document, DocumentSummary
from ..graph.answers import GraphFact, GraphRecall
from ..identity import Identity, Scope
from ..model import FactVersion, Kind, WriteResult
from ..ports import SqlParams, SqlResult
from ..retrieval.answer import Answer
from ..retrieval.recipes import DEFAULT_RECIPE
from ..retrieval.traces import SearchTrace
from ..retrieval.types import SearchResult
from ..services.ask import AskService
from ..services.documents import DocumentsService
from ..services.extraction import ExtractionService
from ..services.graph import GraphService
from ..services.reads import ReadsService
from ..services.review import ReviewDecision, ReviewItem, ReviewService
from ..services.sql import SqlService
from ..services.writes import WritesService
from ..temporal import Instant
from ..write.batch import BulkResult
from . import (
    byid_ops,
    categories_ops,
    compounding,
    dreams,
    extraction_ops,
    learnings_ops,
    lifecycle_ops,
    lineage_ops,
    observe_ops,
    profiles,
    remember,
    scope_ops,
    settings_ops,
)
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

    # -- lifecycle (api/lifecycle_ops.py) ------------------------------------------------------
    delete = lifecycle_ops.delete
    delete_version = lifecycle_ops.delete_version
    restore = lifecycle_ops.restore
    lock = lifecycle_ops.lock
    unlock = lifecycle_ops.unlock
    pin = lifecycle_ops.pin
    unpin = lifecycle_ops.unpin
    demote = lifecycle_ops.demote
    reject = lifecycle_ops.reject
    redact = lifecycle_ops.redact
    snapshot = lifecycle_ops.snapshot
    restore_snapshot = lifecycle_ops.restore_snapshot
    rollback = lifecycle_ops.rollback

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
    # by-id ops (api/byid_ops.py)
    get_by_id = byid_ops.get_by_id
    update = byid_ops.update
    update_by_id = byid_ops.update_by_id
    verify = byid_ops.verify
    # observation capture (api/observe_ops.py)
    observe_record = observe_ops.observe_record
    observe_crystallize = observe_ops.observe_crystallize
    observe_status = observe_ops.observe_status
    # learnings (api/learnings_ops.py)
    learnings = learnings_ops.learnings
    learning_decide = learnings_ops.learning_decide
    # categories and links (api/categories_ops.py)
    category_define = categories_ops.category_define
    categories = categories_ops.categories
    assign_category = categories_ops.assign_category
    link = categories_ops.link
    links = categories_ops.links
    # scope-wide ops (api/scope_ops.py)
    clear = scope_ops.clear
    clear_undo = scope_ops.clear_undo
    namespace_delete = scope_ops.namespace_delete
    namespace_register = scope_ops.namespace_register
    promote = scope_ops.promote
    proposal_decide = scope_ops.proposal_decide
    # lineage and session summaries (api/lineage_ops.py)
    belief_sources = lineage_ops.belief_sources
    session_summaries = lineage_ops.session_summaries

    def _bound(self, service: type[S]) -> S:
        """A service bound to this run (for the ops listed from sibling modules)."""
        return service(self._memory.session, self.identity, self.origin)
