"""Schema v11: session summaries: a digest per session, written by a worker."""

from __future__ import annotations

SUMMARIES_DDL = ""
