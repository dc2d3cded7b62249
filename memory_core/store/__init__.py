"""Storage adapters. The core talks to the ``VersionStore`` port; DuckDB is the embedded default."""

from .duckdb_store import DuckDBStore
from .port import Head, KeyChange, VersionStore, WriteBatch

__all__ = ["DuckDBStore", "Head", "KeyChange", "VersionStore", "WriteBatch"]
