"""Schema v11: the learnings queue: rules a user states about the agent, filed as candidates with their supporters."""

from __future__ import annotations

LEARNINGS_DDL = ""
