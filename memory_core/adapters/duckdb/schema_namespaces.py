"""Schema v11: namespaces soft-deleted by namespace_delete (reads and workers skip them)."""

from __future__ import annotations

NAMESPACES_DDL = ""
