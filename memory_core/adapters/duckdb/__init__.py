"""The embedded store: DuckDB in the memory home (``DuckDBHome``), and the per-scope SQL memory."""

from .home import DB_FILE, DuckDBHome

__all__ = ["DB_FILE", "DuckDBHome"]
