"""The Memory tool: one facade an agent (or a person, through the CLI) calls.

    with Memory.open(home) as memory:
        tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        tool.set("medication", "ibuprofen", valid_at="2024-03-01T00:00:00Z")
        tool.get("medication", as_of="2024-04-15T00:00:00Z")

Every op names a scope; the owner of the rows it touches comes from the run identity.
"""
from __future__ import annotations

import uuid
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable

from .audit import AuditReport
from .changes import (Decision, Statement, as_fact_states, decide_delete, decide_restore, decide_statement,
                      visible)
from .clock import Clock, SystemClock
from .errors import EmptyKey, InvalidInput, NotFound
from .identity import Identity, Scope
from .model import FactVersion, Kind, Provenance, WriteResult
from .embed import Embedder, make_embedder
from .indexing import IndexProjector
from .retrieval import SearchResult
from .retrieval.search_api import run_search
from .store import DuckDBStore, Head
from .store.lance_index import LanceIndex
from .temporal import check_interval, parse_instant
from .timeline import fact_at
from .values import canonical_json, content_sha256

MAX_KEY_LENGTH = 512
Instant = datetime | str | None


def _new_id() -> str:
    return uuid.uuid4().hex


def validate_key(key: object) -> str:
    if not isinstance(key, str) or not key.strip():
        raise EmptyKey("key must be a non-empty string")
    if len(key) > MAX_KEY_LENGTH:
        raise InvalidInput(f"key is {len(key)} characters long; the limit is {MAX_KEY_LENGTH}", field="key")
    if any(ord(ch) < 32 for ch in key):
        raise InvalidInput("key must not contain control characters", field="key")
    return key


def _optional_text(value: object, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{field} must be a non-empty string when given", field=field)
    return value.strip()


def validate_memory_type(memory_type: object) -> str:
    if not isinstance(memory_type, str) or not memory_type.strip():
        raise InvalidInput("memory_type must be a non-empty string", field="memory_type")
    return memory_type.strip()


class Memory:
    """An open memory home. Bind it to a run with ``for_run`` to get the tool.

    With an ``embedder`` the home also keeps the retrieval index (``lance/``) current on every
    write and serves ``recall`` / ``search``; without one it is the authoritative store alone.
    """

    def __init__(self, store: DuckDBStore, clock: Clock | None = None, new_id: Callable[[], str] = _new_id,
                 embedder: Embedder | None = None) -> None:
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self._new_id = new_id
        self.embedder = embedder
        self._projector: IndexProjector | None = None

    @classmethod
    def open(cls, home: str | Path, *, clock: Clock | None = None, create: bool = True, read_only: bool = False,
             embedder: str | Embedder | None = None, **embedder_options: Any) -> "Memory":
        home = Path(home)
        store = DuckDBStore.open(home, create=create, read_only=read_only)
        if isinstance(embedder, str):
            embedder = make_embedder(embedder, cache_dir=home / "models", **embedder_options)
        return cls(store, clock, embedder=embedder)

    @property
    def home(self) -> Path:
        return self.store.path.parent

    @property
    def projector(self) -> IndexProjector:
        if self.embedder is None:
            raise InvalidInput("this memory was opened without an embedder, so it has no retrieval index; "
                               "open it with embedder='static' (or minilm, openai, hashing)")
        if self._projector is None:
            index = LanceIndex(self.home / "lance", self.embedder.name, self.embedder.dim)
            self._projector = IndexProjector(self.store, index, self.embedder, self.clock)
        return self._projector

    def repair_projections(self) -> int:
        """Write to the index every fact whose index write failed earlier."""
        return self.projector.repair()

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Rebuild the retrieval index from the authoritative store."""
        return self.projector.reindex(progress=progress)

    def for_run(self, identity: Identity, *, origin: str = "memory.api") -> "MemoryTool":
        return MemoryTool(self, identity, origin)

    def verify_audit(self) -> AuditReport:
        return self.store.verify_audit()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MemoryTool:
    """The Memory tool bound to one run identity."""

    def __init__(self, memory: Memory, identity: Identity, origin: str) -> None:
        self._memory = memory
        self._store = memory.store
        self.identity = identity
        self.origin = origin

    # -- helpers -------------------------------------------------------------------------------

    def _provenance(self, source_quote: str | None = None) -> Provenance:
        i = self.identity
        return Provenance(tenant=i.tenant, actor=i.actor, origin=self.origin, session=i.session, run=i.run,
                          agent=i.agent, model=i.model, source_quote=source_quote)

    def _now(self) -> datetime:
        return self._memory.clock.now()

    @staticmethod
    def _created_at(head: Head | None, now: datetime) -> datetime:
        # Transaction time never runs backwards for a key, even if an injected clock does.
        return max(now, head.updated_at) if head else now

    def _read_times(self, as_of: Instant, known_at: Instant) -> tuple[datetime, datetime | None]:
        known = parse_instant(known_at, "known_at")
        when = parse_instant(as_of, "as_of")
        # get(known_at=T) alone answers what get() answered at T.
        return (when or known or self._now()), known

    def _apply(self, decision: Decision) -> WriteResult:
        self._store.apply([decision.change])
        if self._memory.embedder is not None:
            self._memory.projector.project(decision.change.rows)  # records its own failure
        return WriteResult(decision.verdict, decision.change.key, decision.change.rows)

    # -- ops -----------------------------------------------------------------------------------

    def set(self, key: str, value: Any, *, scope: str | Scope = Scope.USER, kind: str | Kind = Kind.FACT,
            memory_type: str = "general", valid_at: Instant = None, invalid_at: Instant = None,
            observed_at: Instant = None, subject: str | None = None, context: str | None = None) -> WriteResult:
        """State ``value`` under ``key``. A changed value supersedes; the same value reinforces.

        ``subject`` names who the value is about or who said it; ``context`` is text that helps
        find the row by its words (say, the turns before a dialog turn) without being its value.
        """
        key = validate_key(key)
        namespace = self.identity.namespace(scope)
        parsed_kind = Kind.parse(kind)
        memory_type = validate_memory_type(memory_type)
        canonical = canonical_json(value)
        start = parse_instant(valid_at, "valid_at")
        end = parse_instant(invalid_at, "invalid_at")
        observed = parse_instant(observed_at, "observed_at")
        now = self._now()
        start = start or now
        check_interval(start, end)
        subject = _optional_text(subject, "subject")
        context = _optional_text(context, "context")
        statement = Statement(key, canonical, content_sha256(canonical), parsed_kind, memory_type, start, end,
                              invalid_at is not None, observed, subject, context)
        with self._store.locked():
            head = self._store.head(namespace, key)
            states = self._store.fact_states(namespace, key)
            created_at = self._created_at(head, now)
            decision = decide_statement(namespace, head, states, statement, self._provenance(), created_at,
                                        self._memory._new_id)
            return self._apply(decision)

    def get(self, key: str, *, scope: str | Scope = Scope.USER, as_of: Instant = None,
            known_at: Instant = None) -> FactVersion | None:
        """The fact live at ``as_of`` (default now) as the store believed it at ``known_at``."""
        key = validate_key(key)
        namespace = self.identity.namespace(scope)
        when, known = self._read_times(as_of, known_at)
        states = visible(self._store.fact_states(namespace, key, known))
        found = fact_at(as_fact_states(states), when)
        return None if found is None else next(s for s in states if s.fact_id == found.fact_id)

    def list(self, *, scope: str | Scope = Scope.USER, as_of: Instant = None,
             known_at: Instant = None) -> list[FactVersion]:
        """Every key of the scope with a fact live at ``as_of``, ordered by key."""
        namespace = self.identity.namespace(scope)
        when, known = self._read_times(as_of, known_at)
        return self._store.live_facts(namespace, when, known)

    def delete(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Tombstone the key: reads stop seeing it, history keeps it, ``restore`` brings it back."""
        key = validate_key(key)
        namespace = self.identity.namespace(scope)
        now = self._now()
        with self._store.locked():
            head = self._store.head(namespace, key)
            states = self._store.fact_states(namespace, key)
            created_at = self._created_at(head, now)
            return self._apply(decide_delete(namespace, key, head, states, self._provenance(), created_at,
                                             self._memory._new_id))

    def restore(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Undo the latest delete of ``key``."""
        key = validate_key(key)
        namespace = self.identity.namespace(scope)
        now = self._now()
        with self._store.locked():
            head = self._store.head(namespace, key)
            history = self._store.history(namespace, key)
            created_at = self._created_at(head, now)
            return self._apply(decide_restore(namespace, key, head, history, self._provenance(), created_at,
                                              self._memory._new_id))

    def history(self, key: str, *, scope: str | Scope = Scope.USER) -> list[FactVersion]:
        """Every version row of ``key`` in this scope, oldest first."""
        key = validate_key(key)
        namespace = self.identity.namespace(scope)
        rows = self._store.history(namespace, key)
        if not rows:
            raise NotFound(f"no history: no key {key!r} in scope {namespace.scope.value}", key=key)
        return rows

    def recall(self, query: str, *, scope: str | Scope = Scope.USER, k: int = 10, recipe: str = "hybrid_rrf",
               as_of: Instant = None, sources: Iterable[str | Kind] | None = None, observed_from: Instant = None,
               observed_to: Instant = None, token_budget: int | None = None,
               participants: Iterable[str] = ()) -> SearchResult:
        """What have I been told about ``query``? Facts and notes by default.

        ``participants`` names the people of a conversation: the semantic leg ignores their names,
        and a recipe with a subject prior favours rows of the one participant the query names.
        """
        return run_search(self, query, scope=scope, k=k, recipe=recipe, as_of=as_of,
                          sources=sources if sources is not None else (Kind.FACT, Kind.NOTE),
                          observed_from=observed_from, observed_to=observed_to, token_budget=token_budget,
                          participants=participants)

    def search(self, query: str, *, scope: str | Scope = Scope.USER, k: int = 10, recipe: str = "hybrid_rrf",
               as_of: Instant = None, sources: Iterable[str | Kind] | None = None, observed_from: Instant = None,
               observed_to: Instant = None, token_budget: int | None = None,
               participants: Iterable[str] = ()) -> SearchResult:
        """Where did I record ``query``? Every plane by default; ``sources`` narrows it."""
        return run_search(self, query, scope=scope, k=k, recipe=recipe, as_of=as_of,
                          sources=sources if sources is not None else tuple(Kind),
                          observed_from=observed_from, observed_to=observed_to, token_budget=token_budget,
                          participants=participants)
