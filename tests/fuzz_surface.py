"""The fuzz's (good, near) strategies for the seed-surface ops' arguments (``tests/fuzz.py`` adds
them to ``ARGS``): by-id ops, scope-wide ops, categories and links, observation capture, lineage
and summaries, learnings. Keyed by name, or ``(op, name)`` where an op means something else."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

SURFACE_ARGS: dict[Any, tuple[st.SearchStrategy, st.SearchStrategy]] = {}
