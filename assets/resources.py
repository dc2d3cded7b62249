"""Dagster resources: thin handles on the memory home (and, as they land, embedder and LLM)."""

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import dagster as dg

from memory_core import Memory
from memory_core.adapters.embedders import make_embedder
from memory_core.environment import resolve_home
from memory_core.ports import Embedder


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
    """The memory home the pipeline reads and writes. Empty ``home``: $MEMCORE_HOME, else ./.memory."""

    home: str = ""

    @property
    def path(self) -> Path:
        return resolve_home(self.home or None).resolve()

    @contextmanager
    def open(self, *, read_only: bool = False, embedder: EmbedderResource | None = None) -> Iterator[Memory]:
        """The home, its index built and queried with ``embedder``'s model (none: no index)."""
        # Open for the work at hand only: DuckDB allows one writer process per file.
        built = embedder.build(self.path) if embedder is not None else None
        with Memory.open(self.path, create=not read_only, read_only=read_only, embedder=built) as memory:
            yield memory

    def peek(self, read: Callable[[Memory], Any]) -> Any:
        """For sensors: ``read(memory)`` on the home opened read-only, or a SkipReason when there
        is no home yet or a writer holds it (the sensor looks again next tick)."""
        if not (self.path / "memory.duckdb").exists():
            return dg.SkipReason(f"no memory home at {self.path} yet")
        try:
            with self.open(read_only=True) as memory:
                return read(memory)
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
