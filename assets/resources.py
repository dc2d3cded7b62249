"""Dagster resources: thin handles on the memory home, the embedder and the LLM.

The home is reached one of two ways: opened here (the embedded default: DuckDB admits one
process, so store-writing jobs run in process), or through a memory service that owns it
(``url``; its admin API key read from the environment variable ``key_env``). The maintenance
assets and the sensors work through one small handle (``HomeOps``) that does the same in both.
"""

import os
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

import dagster as dg

from memory_core import Memory
from memory_core.adapters.embedders import make_embedder
from memory_core.client import RemoteMemory
from memory_core.environment import resolve_home, resolve_store
from memory_core.errors import MemcoreError
from memory_core.ports import Embedder
from memory_core.resolver.actions import PassReport, ResolverSettings
from memory_core.webhooks import DeliveryPolicy, is_due

# The marker naming the home (``MemoryHomeResource.identity``).
HOME_IDENTITY = "home_identity"


class EmbedderResource(dg.ConfigurableResource):
    """Which embedder builds and queries the index. Offline by default (static, cached in the home)."""

    name: str = "static"
    base_url: str = ""
    model: str = ""
    dim: int = 0

    def build(self, home: Path) -> Embedder:
        options = {k: v for k, v in (("base_url", self.base_url), ("model", self.model), ("dim", self.dim)) if v}
        return make_embedder(self.name, cache_dir=home / "models", **options)


class MemoryHomeResource(dg.ConfigurableResource):
    """The memory home the pipeline reads and writes. Empty ``home``: $MEMCORE_HOME, else ./.memory.

    ``url``: a memory service that owns the home (``memcore serve``); the maintenance assets and
    the sensors then work through it with the admin API key in the environment variable
    ``key_env`` (never in config), with the service's own embedder and offline rule judge.
    """

    home: str = ""
    url: str = ""
    key_env: str = "MEMCORE_KEY"
    # A PostgreSQL authority several processes share (empty: $MEMCORE_STORE, else the home's own
    # file); the home then holds this process's index. Workers on other machines can open it at
    # once (docs/scaling.md).
    store: str = ""

    @property
    def path(self) -> Path:
        return resolve_home(self.home or None).resolve()

    @contextmanager
    def open(self, *, read_only: bool = False, embedder: EmbedderResource | None = None) -> Iterator[Memory]:
        """The home, its index built and queried with ``embedder``'s model (none: no index). While a
        memory service holds the home this is ``HomeBusy``: the assets that go through ``url``
        use ``maintenance`` instead."""
        # Open for the work at hand only: DuckDB allows one writer process per file.
        built = embedder.build(self.path) if embedder is not None else None
        store = resolve_store(self.store or None)
        with Memory.open(self.path, create=not read_only, read_only=read_only, embedder=built, store=store) as memory:
            yield memory

    def identity(self) -> str:
        """Which home this is: a random id the platform keeps in the home, made on the first call
        (opening the home creates it empty if it does not exist, so the id is fixed before any
        asset writes). A served home is named by its service's URL."""
        if self.url:
            return f"service:{self.url}"
        with self.open() as memory:
            found = memory.store.inspection.marker(HOME_IDENTITY)
            if found is None:
                found = uuid.uuid4().hex
                memory.store.inspection.set_marker(HOME_IDENTITY, found)
        return found

    def remote(self) -> RemoteMemory:
        """The memory service at ``url``, reached with the admin key in ``$key_env``."""
        key = os.environ.get(self.key_env, "").strip()
        if not key:
            raise dg.Failure(
                description=f"the memory service at {self.url} needs an admin API key in ${self.key_env} "
                "(create one on the home with keys.create(..., admin=True)); it is never read from config"
            )
        return RemoteMemory(self.url, key)

    @contextmanager
    def maintenance(self, *, read_only: bool = False, embedder: EmbedderResource | None = None) -> Iterator["HomeOps"]:
        """The home's maintenance and the reads sensors need: through the service at ``url`` when
        one is set (``embedder`` is then the service's own), else on the home opened here."""
        if self.url:
            with self.remote() as remote:
                yield ServedHome(remote)
        else:
            with self.open(read_only=read_only, embedder=embedder) as memory:
                yield LocalHome(memory)

    def peek(self, read: Callable[["HomeOps"], Any]) -> Any:
        """For sensors: ``read(home)`` on the home opened read-only, or asked of the service at
        ``url``; a SkipReason when there is no home yet, a writer holds it, or the service cannot
        answer (the sensor looks again next tick)."""
        if self.url:
            try:
                with self.maintenance() as home:
                    return read(home)
            except dg.Failure as exc:
                return dg.SkipReason(exc.description or "the memory service needs an admin API key")
            except MemcoreError as exc:
                return dg.SkipReason(f"the memory service at {self.url} did not answer ({exc.code}); will look again")
        if not (self.path / "memory.duckdb").exists() and resolve_store(self.store or None) is None:
            return dg.SkipReason(f"no memory home at {self.path} yet")
        try:
            with self.maintenance(read_only=True) as home:
                return read(home)
        except Exception as exc:  # noqa: BLE001 - any failure to open means: look again next tick
            return dg.SkipReason(f"the memory home is busy ({type(exc).__name__}); will look again")


class LLMResource(dg.ConfigurableResource):
    """The model behind extraction and the conflict resolver. Empty ``base_url``: offline (the
    rule-based extractor and judge); else any OpenAI-compatible server, the key read from the
    environment variable ``api_key_env``."""

    base_url: str = ""
    model: str = ""
    api_key_env: str = "OPENAI_API_KEY"

    @property
    def offline(self) -> bool:
        return not self.base_url

    def _chat(self):
        import os

        from memory_core.adapters.llm.openai_chat import OpenAIChat

        return OpenAIChat(self.base_url, self.model or "default", api_key=os.environ.get(self.api_key_env, "none"))

    def extractor(self):
        from memory_core.adapters.llm.extractor import LLMExtractor
        from memory_core.extraction.rules import RuleExtractor

        return RuleExtractor() if self.offline else LLMExtractor(self._chat())

    def judge(self):
        from memory_core.adapters.llm.judge import LLMJudge
        from memory_core.resolver.judge import RuleJudge

        return RuleJudge() if self.offline else LLMJudge(self._chat())

    def merger(self):
        from memory_core.adapters.llm.merger import LLMMerger
        from memory_core.consolidation import RuleMerger

        return RuleMerger() if self.offline else LLMMerger(self._chat())


class HomeOps(Protocol):
    """What the maintenance assets and the sensors do to a home: the same calls on a home opened
    here (``LocalHome``) and through a memory service (``ServedHome``)."""

    where: str

    def sweep_expired(self) -> dict[str, int]: ...

    def flush(self) -> int: ...

    def repair_projections(self) -> int: ...

    def optimize_index(self) -> dict[str, Any]: ...

    def pending_repairs(self) -> int: ...

    def resolve(self, llm: LLMResource, *, floor: float, batch: int) -> PassReport: ...

    def mark_counts(self) -> dict[str, int]: ...

    def queue_state(self) -> tuple[str, dict[str, int]]: ...

    def tenants(self) -> list[str]: ...

    def deliver_webhooks(self) -> dict[str, int]: ...

    def webhook_backlog(self) -> int: ...

    # The background workers (``workers``): apply=False reports what a run would do.
    def reconcile_orphan_vectors(self, *, apply: bool) -> dict[str, Any]: ...

    def sweep_sensitivity(self, *, apply: bool) -> dict[str, Any]: ...

    def recalibrate(self, *, apply: bool) -> list[dict[str, Any]]: ...

    def detect_communities(self, *, apply: bool) -> dict[str, Any]: ...

    def build_profiles(self, *, apply: bool) -> dict[str, Any]: ...

    def fold_usage(self, *, apply: bool) -> dict[str, Any]: ...

    def fill_embeddings(self, *, apply: bool, limit: int, max_attempts: int) -> dict[str, Any]: ...

    # Dreams (``dreams``): one pass per namespace, each as ``DreamPass.to_dict()``; proposals only.
    def dream(
        self, *, tenant: str | None, window_days: int, stale_days: int, min_cosine: float
    ) -> list[dict[str, Any]]: ...


# A job's pass is bounded: at most 20 POSTs of at most 2 s each, four webhooks at a time; the
# sensor launches another while events are due.
SENSOR_DELIVERY = DeliveryPolicy(timeout_s=2.0, posts_per_pass=20)


class LocalHome:
    """``HomeOps`` on a home this process opened."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.where = f"the memory home {memory.home}"

    def sweep_expired(self) -> dict[str, int]:
        return self.memory.sweep_expired()

    def flush(self) -> int:
        return self.memory.flush()

    def repair_projections(self) -> int:
        return self.memory.repair_projections()

    def optimize_index(self) -> dict[str, Any]:
        return self.memory.projector.optimize()

    def pending_repairs(self) -> int:
        return len(self.memory.store.projections.pending_projection_failures())

    def resolve(self, llm: LLMResource, *, floor: float, batch: int) -> PassReport:
        return self.memory.resolve(llm.judge(), settings=ResolverSettings(floor=floor, batch=batch))

    def mark_counts(self) -> dict[str, int]:
        return self.memory.store.ledger.mark_counts()

    def queue_state(self) -> tuple[str, dict[str, int]]:
        queue = self.memory.store.queue
        return queue.queue_cursor(), queue.queue_backlog()

    def tenants(self) -> list[str]:
        return self.memory.store.inspection.tenants()

    def deliver_webhooks(self) -> dict[str, int]:
        return self.memory.deliver_webhooks(worker=f"dagster-{os.getpid()}", policy=SENSOR_DELIVERY)

    def webhook_backlog(self) -> int:
        """Events due now: each webhook's oldest unsettled one, not waiting for a retry or a lease."""
        now = self.memory.clock.now()
        heads = self.memory.store.webhooks.heads()
        return sum(1 for h in heads if is_due(h["outcome"], h["next_attempt_at"], now))

    def reconcile_orphan_vectors(self, *, apply: bool) -> dict[str, Any]:
        return self.memory.reconcile_orphan_vectors(apply=apply)

    def sweep_sensitivity(self, *, apply: bool) -> dict[str, Any]:
        return self.memory.sweep_sensitivity(apply=apply)

    def recalibrate(self, *, apply: bool) -> list[dict[str, Any]]:
        return self.memory.recalibrate(apply=apply)

    def detect_communities(self, *, apply: bool) -> dict[str, Any]:
        return self.memory.detect_communities(apply=apply)

    def build_profiles(self, *, apply: bool) -> dict[str, Any]:
        return self.memory.build_profiles(apply=apply)

    def fold_usage(self, *, apply: bool) -> dict[str, Any]:
        return self.memory.fold_usage(apply=apply)

    def fill_embeddings(self, *, apply: bool, limit: int, max_attempts: int) -> dict[str, Any]:
        return self.memory.fill_embeddings(apply=apply, limit=limit, max_attempts=max_attempts)

    def dream(
        self, *, tenant: str | None, window_days: int, stale_days: int, min_cosine: float
    ) -> list[dict[str, Any]]:
        passes = self.memory.dream_all(
            tenant=tenant, window_days=window_days, stale_days=stale_days, min_cosine=min_cosine
        )
        return [p.to_dict() for p in passes]


class ServedHome:
    """``HomeOps`` through a memory service's admin routes (an admin key)."""

    def __init__(self, remote: RemoteMemory) -> None:
        self.remote = remote
        self.where = f"the memory service at {remote.url}"

    def sweep_expired(self) -> dict[str, int]:
        return self.remote.sweep_expired()

    def flush(self) -> int:
        return self.remote.flush()

    def repair_projections(self) -> int:
        return self.remote.repair_projections()

    def optimize_index(self) -> dict[str, Any]:
        return self.remote.optimize_index()

    def pending_repairs(self) -> int:
        return self.remote.pending_projection_failures()

    def resolve(self, llm: LLMResource, *, floor: float, batch: int) -> PassReport:
        """A pass with the service's judge, which is the offline rule judge: an LLM judge configured
        here cannot be sent over HTTP, so asking for one is an error, not a silent substitution."""
        if not llm.offline:
            raise dg.Failure(
                description=f"the resolver pass through {self.where} judges with the service's offline rule "
                f"judge; the LLM judge configured here ({llm.base_url}) cannot be used over HTTP. Leave "
                "llm.base_url empty to accept the rule judge, or run the pass where the home is opened"
            )
        return self.remote.resolve(floor=floor, batch=batch)

    def mark_counts(self) -> dict[str, int]:
        return self.remote.resolver_marks()

    def queue_state(self) -> tuple[str, dict[str, int]]:
        return self.remote.queue_state()

    def tenants(self) -> list[str]:
        return self.remote.tenants()

    def deliver_webhooks(self) -> dict[str, int]:
        """A pass of the service's own worker (the service delivers every second anyway)."""
        return self.remote.deliver_webhooks()

    def webhook_backlog(self) -> int:
        """None to launch a run for: the service's own worker delivers."""
        return 0

    def reconcile_orphan_vectors(self, *, apply: bool) -> dict[str, Any]:
        return self.remote.reconcile_orphan_vectors(apply=apply)

    def sweep_sensitivity(self, *, apply: bool) -> dict[str, Any]:
        return self.remote.sweep_sensitivity(apply=apply)

    def recalibrate(self, *, apply: bool) -> list[dict[str, Any]]:
        """Measured with the service's own embedder (the one its writes are judged with)."""
        return self.remote.recalibrate(apply=apply)

    def detect_communities(self, *, apply: bool) -> dict[str, Any]:
        return self.remote.detect_communities(apply=apply)

    def build_profiles(self, *, apply: bool) -> dict[str, Any]:
        return self.remote.build_profiles(apply=apply)

    def fold_usage(self, *, apply: bool) -> dict[str, Any]:
        """The service's own searches' exposures are folded too (it flushes them first)."""
        return self.remote.fold_usage(apply=apply)

    def fill_embeddings(self, *, apply: bool, limit: int, max_attempts: int) -> dict[str, Any]:
        """With the service's own embedder (the one its index was built with)."""
        return self.remote.fill_embeddings(apply=apply, limit=limit, max_attempts=max_attempts)

    def dream(
        self, *, tenant: str | None, window_days: int, stale_days: int, min_cosine: float
    ) -> list[dict[str, Any]]:
        """Not offered yet: the service has no admin route that passes over every namespace."""
        raise dg.Failure(
            description=f"a Dreams pass over every namespace runs where the home is opened: {self.where} "
            "has no Dreams admin route yet. Run the dreams_pass asset with memory_home.home set (no url), or "
            "call MemoryTool.dream per namespace through the service"
        )
