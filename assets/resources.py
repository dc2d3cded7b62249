"""Dagster resources: thin handles on the memory home (and, as they land, embedder and LLM)."""

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import dagster as dg

from memory_core import Memory
from memory_core.config import resolve_home
from memory_core.embed import Embedder, make_embedder


class MemoryHomeResource(dg.ConfigurableResource):
    """The memory home the pipeline reads and writes. Empty ``home``: $MEMCORE_HOME, else ./.memory."""

    home: str = ""

    @property
    def path(self) -> Path:
        return resolve_home(self.home or None).resolve()

    @contextmanager
    def open(self, *, read_only: bool = False, embedder: Embedder | None = None) -> Iterator[Memory]:
        # Open for the work at hand only: DuckDB allows one writer process per file.
        with Memory.open(self.path, create=not read_only, read_only=read_only, embedder=embedder) as memory:
            yield memory


class EmbedderResource(dg.ConfigurableResource):
    """Which embedder builds and queries the index. Offline by default (static, cached in the home)."""

    name: str = "static"
    base_url: str = ""
    model: str = ""
    dim: int = 0

    def build(self, home: Path) -> Embedder:
        options = {k: v for k, v in (("base_url", self.base_url), ("model", self.model), ("dim", self.dim)) if v}
        return make_embedder(self.name, cache_dir=home / "models", **options)
