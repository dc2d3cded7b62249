"""Dagster resources: thin handles on the memory home (and, as they land, embedder and LLM)."""

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import dagster as dg

from memory_core import Memory
from memory_core.config import resolve_home


class MemoryHomeResource(dg.ConfigurableResource):
    """The memory home the pipeline reads and writes. Empty ``home``: $MEMCORE_HOME, else ./.memory."""

    home: str = ""

    @property
    def path(self) -> Path:
        return resolve_home(self.home or None).resolve()

    @contextmanager
    def open(self, *, read_only: bool = False) -> Iterator[Memory]:
        # Open for the work at hand only: DuckDB allows one writer process per file.
        with Memory.open(self.path, create=not read_only, read_only=read_only) as memory:
            yield memory
