"""The Memory tool: one facade an agent (or a person, through the CLI) calls.

    with Memory.open(home, embedder="static") as memory:
        tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        tool.set("medication", "ibuprofen", valid_at="2024-03-01T00:00:00Z")
        tool.get("medication", as_of="2024-04-15T00:00:00Z")

``Memory`` opens the adapters of a home and wires them into a ``Session``; ``for_run`` binds the
Memory tool (``MemoryTool``) to a run identity. Every op names a scope; the owner of the rows it
touches comes from the run identity.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Callable, Sequence

from ..adapters.calibrations import read_calibrations, write_calibration
from ..adapters.duckdb import DuckDBHome
from ..adapters.duckdb.home import KEY_DIR
from ..adapters.duckdb.sql_memory import SqlMemory
from ..adapters.embedders import make_embedder
from ..adapters.home_files import HomeFolder
from ..adapters.receipt_keys import FileKeyring
from ..adapters.tokens import DefaultTokens
from ..audit import AuditReport
from ..clock import SystemClock
from ..errors import InvalidInput
from ..extraction.model import Extractor
from ..extraction.pipeline import BUILTIN_STEPS, Step
from ..identity import Identity
from ..model import FactVersion
from ..ports import LLM, Clock, Embedder, IndexSink, ReceiptKeyring, SqlDatabases, Store, TokenCounter
from ..ports.chunks import Chunker
from ..resolver.actions import PassReport, ResolverSettings
from ..resolver.judge import Judge, RuleJudge
from ..retrieval.calibration import Calibration
from ..services.access import AccessService
from ..services.extraction import ExtractionWorker
from ..services.maintenance import ExpiryService
from ..services.resolver import ResolverService
from ..session import Session
from ..session.core import IndexPorts
from ..session.usage import flush_exposures
from ..write.tenant_config import WriteConfig
from . import compounding, dreams, lineage_ops, memory_admin, memory_workers, observe_ops, profiles, reflect_ops
from .tool import MemoryTool
from .validate import MEMORY_RULES, guard_ops

log = logging.getLogger(__name__)


def _new_id() -> str:
    return os.urandom(16).hex()  # a random 128-bit id, as uuid4 but without its object


def open_lance_index(session: Session, *, chunker: Chunker | None = None) -> IndexPorts:
    """The retrieval index of the home, built the first time something needs it (once: the
    session builds it under a lock, whichever thread asks first). ``chunker``: what cuts long
    values into chunks for retrieval (default ``ValueChunker()``, ``VALUE_CHUNK_CHARS``); pass
    ``open_index=functools.partial(open_lance_index, chunker=ValueChunker(800))`` to change it."""
    # Imported here: lancedb takes about a second to import, which a command that never searches
    # (get, audit, a home without an embedder) should not pay.
    from ..adapters.lance import IndexProjector
    from ..adapters.lance.chunked import ChunkedLanceIndex, ChunkedLanceSearch

    store, embedder = session.store, session.embedder
    index = ChunkedLanceIndex(store.home / "lance", embedder, chunker)
    added = [] if store.read_only else index.upgrade_layout()
    if added:
        log.info("the retrieval index gained the columns %s", ", ".join(added))
    follow = session.follower.sync if session.follower is not None else None
    sink = IndexProjector(
        session.versions, session.projections, index, embedder, session.clock, session.indexable, follow=follow
    )
    return sink, ChunkedLanceSearch(index)


def open_store(home: Path, url: str | None, *, create: bool, read_only: bool, key_dir: str | Path | None) -> Store:
    """The authoritative store: the home's DuckDB file, or the PostgreSQL authority ``url`` names."""
    if url is None:
        return DuckDBHome.open(home, create=create, read_only=read_only, key_dir=key_dir)
    if not isinstance(url, str) or not url.lower().startswith(("postgresql://", "postgres://")):
        raise InvalidInput("store must be a postgresql:// URL (or None for the home's own file)", field="store")
    from ..adapters.postgres.home import PgHome  # psycopg is the scale extra's: loaded only when asked for

    keys = Path(key_dir) if key_dir is not None else None
    return PgHome.open(url, home, create=create, read_only=read_only, key_dir=keys)


@guard_ops(MEMORY_RULES)  # every argument is checked before the op runs (api/validate.py)
class Memory:
    """An open memory home. Bind it to a run with ``for_run`` to get the tool.

    With an ``embedder`` the home also keeps the retrieval index (``lance/``) current, judges new
    facts against their peers and serves ``recall`` / ``search``; without one it is the
    authoritative store alone (writes are indexed the next time it is opened with one).
    """

    def __init__(
        self,
        store: Store,
        clock: Clock | None = None,
        new_id: Callable[[], str] = _new_id,
        embedder: Embedder | None = None,
        *,
        open_index: Callable[[Session], IndexPorts] = open_lance_index,
        receipts: ReceiptKeyring | None = None,
        tokens: TokenCounter | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.session = Session(
            store,
            clock or SystemClock(),
            new_id,
            embedder,
            open_index=open_index,
            open_sql=lambda: SqlMemory(store.home / "sql", read_only=store.read_only),
            receipts=receipts or FileKeyring(store.home / KEY_DIR, read_only=store.read_only),
            tokens=tokens or DefaultTokens(),
            files=HomeFolder(store.home),
        )
        self.keys = AccessService(self.session)  # the memory service's API keys
        self._closed = False

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
        open_index: Callable[[Session], IndexPorts] = open_lance_index,
        key_dir: str | Path | None = None,
        llm: LLM | None = None,
        store: str | None = None,
        **embedder_options: Any,
    ) -> "Memory":
        """Open (or create) the home at ``home``. ``open_index`` builds the retrieval index the
        first time something needs it (default: the home's Lance index); a test may wrap it.
        ``key_dir``: where the home's signing key lives (default ``<home>/keys``); keep it
        elsewhere to protect the audit chain from whoever can write the home (``docs/audit.md``).
        ``llm``: the language model ``ask`` answers through (``adapters.llm.openai_chat.OpenAIChat``).
        ``store``: a PostgreSQL authority (``postgresql://...?schema=NAME``) several processes share,
        instead of the home's own DuckDB file; the home then keeps this process's index and files
        (``docs/scaling.md``)."""
        home = Path(home)
        store = open_store(home, store, create=create, read_only=read_only, key_dir=key_dir)
        try:
            if isinstance(embedder, str):
                embedder = make_embedder(embedder, cache_dir=home / "models", **embedder_options)
            keyring = FileKeyring(Path(key_dir) if key_dir is not None else home / KEY_DIR, read_only=read_only)
            memory = cls(store, clock, new_id, embedder=embedder, open_index=open_index, receipts=keyring)
            memory.session.relevance.update(read_calibrations(home))
            memory.llm = llm
        except BaseException:
            store.close()
            raise
        return memory

    @property
    def home(self) -> Path:
        return self.store.home

    @property
    def clock(self) -> Clock:
        return self.session.clock

    @clock.setter
    def clock(self, clock: Clock) -> None:
        self.session.clock = clock

    # -- extraction settings -------------------------------------------------------------------

    @property
    def extractor(self) -> Extractor:
        """What ``set_from_messages`` extracts with unless a call names another (offline rules by default)."""
        return self.session.extraction.extractor

    @extractor.setter
    def extractor(self, extractor: Extractor) -> None:
        self.session.extraction.extractor = extractor

    @property
    def steps(self) -> dict[str, Step]:
        return self.session.extraction.steps

    def register_step(self, name: str, step: Step) -> None:
        """Make an operator's step available to ``set_from_messages(steps=[...])``."""
        if not isinstance(name, str) or not name.strip() or not callable(step):
            raise InvalidInput("a step needs a name and a callable (state, context) -> None", field="step")
        if name in BUILTIN_STEPS:
            raise InvalidInput(f"{name!r} is a built-in step", field="step")
        self.session.extraction.steps[name] = step

    # -- the home's settings and parts ---------------------------------------------------------

    def write_config(self, tenant: str) -> WriteConfig:
        return self.session.write_config(tenant)

    def indexable(self, state: FactVersion) -> bool:
        """Does the index serve this state? Visible, not high, of an embedded type, not an anonymized
        shell nor a redacted row."""
        return self.session.indexable(state)

    @property
    def projector(self) -> IndexSink:
        """The retrieval index's sink (refused for a home opened without an embedder)."""
        return self.session.require_index()

    @property
    def sql(self) -> SqlDatabases:
        """The per-scope SQL databases under ``<home>/sql/``."""
        return self.session.sql

    @property
    def llm(self) -> LLM | None:
        """The language model ``ask`` answers through (None: ``ask`` is refused with LLM_NOT_CONFIGURED)."""
        return self.session.llm

    @llm.setter
    def llm(self, llm: LLM | None) -> None:
        if llm is not None and not callable(getattr(llm, "complete_json", None)):
            raise InvalidInput("llm must offer complete_json (the LLM port)", field="llm")
        self.session.llm = llm

    # -- relevance calibration -------------------------------------------------------------------

    @property
    def calibrations(self) -> list[Calibration]:
        """The relevance calibrations recall and search use (packaged, then the home's own)."""
        kept = dict(self.session.relevance)  # a snapshot: an install may add one meanwhile
        return [kept[key] for key in sorted(kept)]

    def install_calibration(self, calibration: Calibration) -> Path:
        """Keep ``calibration`` in the home: searches of its recipe under its embedder give each
        hit its P(relevant) and abstain under the threshold (docs/retrieval.md)."""
        if self.store.read_only:
            raise InvalidInput("this memory was opened read-only: a calibration cannot be installed")
        calibration = Calibration.from_dict(calibration.to_dict())  # finite, in range, as a file must be
        path = write_calibration(self.home, calibration)
        self.session.relevance[(calibration.embedder, calibration.recipe)] = calibration
        return path

    # -- the index -----------------------------------------------------------------------------

    def flush(self) -> int:
        """Write queued index changes now and settle the index to one row per fact (searches
        write the queue themselves and settle only now and then: docs/retrieval.md)."""
        return self.session.index.flush() if self.session.has_index else 0

    def tend_index(self) -> bool:
        """Index upkeep between requests: write the queued index changes and settle or fold what
        waits past its thresholds, so searches find little to do themselves. For a thread of its
        own (``memcore serve`` runs one); cheap when there is nothing to do. True when it worked."""
        index = self.session.built_index
        return index.tend() if index is not None and not self._closed else False

    def prewarm_index(self, *, hit_columns: bool = True, vector_budget_bytes: int = 0) -> int:
        """Load the index's search structures and resident columns into this process now: for a
        long-lived process (``memcore serve`` does it before it listens), whose first few hundred
        searches would otherwise read them from disk. ``vector_budget_bytes``: hold the stored
        vectors too while they take at most that (a score-fusing search reads its lexical
        candidates' vectors, and the vector leg of a small namespace compares them here, with
        copies of its own within as much again). Answers the bytes held (docs/retrieval.md)."""
        if not self.session.has_index:
            return 0
        index = self.session.require_index()
        return index.prewarm(hit_columns=hit_columns, vector_budget_bytes=vector_budget_bytes)

    def repair_projections(self) -> int:
        """Write to the index every fact whose index write failed earlier."""
        return self.session.require_index().repair()

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Rebuild the retrieval index from the authoritative store."""
        index = self.session.require_index()
        self.session.forget_peers()
        return index.reindex(progress=progress)

    # -- a home's workers ----------------------------------------------------------------------

    def sweep_expired(self, *, actor: str = "worker:expiry-sweep") -> dict[str, int]:
        """Apply on_expire to every fact whose expires_at has passed. Returns counts by action."""
        return ExpiryService(self.session).sweep_expired(actor=actor)

    def run_extraction_queue(
        self,
        *,
        worker: str | None = None,
        limit: int = 8,
        lease_s: float = 300.0,
        kinds: Sequence[str] = ("extract", "harvest"),
    ) -> dict[str, int]:
        """Lease up to ``limit`` due extraction jobs and run them; counts by outcome."""
        return ExtractionWorker(self.session).run(
            worker=worker or f"worker-{os.getpid()}", limit=limit, lease_s=lease_s, kinds=kinds
        )

    def bank_harvest(self, identity: Identity, payload: dict[str, Any], *, capacity: int) -> bool:
        """Queue a span context distillation evicted for the consolidator (``extraction.harvest``)."""
        return ExtractionWorker(self.session).bank_harvest(identity, payload, capacity=capacity)

    def resolve(self, judge: Judge | None = None, settings: ResolverSettings | None = None) -> PassReport:
        """One conflict-resolver pass: mark new statements, judge owed ones, act (see ``resolver``)."""
        if self.embedder is None:
            raise InvalidInput("the conflict resolver compares vectors: open the memory with an embedder")
        return ResolverService(self.session).run_pass(judge or RuleJudge(), settings)

    # -- operators' ops (api/memory_admin.py) ----------------------------------------------------

    erase = memory_admin.erase
    erasures = memory_admin.erasures
    recover_erasures = memory_admin.recover_erasures
    webhook_register = memory_admin.webhook_register
    webhook_rotate = memory_admin.webhook_rotate
    webhook_remove = memory_admin.webhook_remove
    webhooks = memory_admin.webhooks
    deliver_webhooks = memory_admin.deliver_webhooks
    webhook_deliveries = memory_admin.webhook_deliveries
    consolidate_all = compounding.consolidate_all
    dream_all = dreams.dream_all
    reflect = reflect_ops.reflect  # the reflect pipeline (docs/reflect.md)
    reflect_phase = reflect_ops.reflect_phase
    reflect_state = reflect_ops.reflect_state

    # -- background workers (api/memory_workers.py, docs/workers.md) ---------------------------

    reconcile_orphan_vectors = memory_workers.reconcile_orphan_vectors
    sweep_sensitivity = memory_workers.sweep_sensitivity
    recalibrate = memory_workers.recalibrate
    detect_communities = memory_workers.detect_communities
    fold_usage = memory_workers.fold_usage
    fill_embeddings = memory_workers.fill_embeddings
    build_profiles = profiles.build_profiles  # structured profiles (api/profiles.py)
    summarize_sessions = lineage_ops.summarize_sessions  # session summaries (api/lineage_ops.py)
    observe_extract = observe_ops.observe_extract  # observation capture's worker, off unless called

    def for_run(self, identity: Identity, *, origin: str = "memory.api") -> "MemoryTool":
        return MemoryTool(self, identity, origin)

    def index_queued(self) -> int:
        """Facts waiting for the next index write (0 when the index is not open)."""
        index = self.session.built_index
        return index.queued() if index is not None else 0

    def verify_audit(self) -> AuditReport:
        return self.store.versions.verify_audit()

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            index = self.session.built_index
            if index is not None:
                index.flush()
            flush_exposures(self.session)  # what searches showed, for the usage fold
        finally:
            sql = self.session.built_sql
            if sql is not None:
                sql.close()
            self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
