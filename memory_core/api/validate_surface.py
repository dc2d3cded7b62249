"""The rules of the seed-surface ops' arguments (by-id ops, scope-wide ops, categories and links,
observation capture, lineage and summaries, learnings): merged into ``validate.TOOL_RULES`` and
``validate.OP_RULES``. A name shared with an older op means the same thing in both."""

from __future__ import annotations

from .boundary import Rule
from .rule_kinds import _flag, _integer, _text  # noqa: F401  (the kinds the lanes below use)

# The Memory tool's arguments, by name.
SURFACE_RULES: dict[str, Rule] = {}
# An argument whose name means something else in another op: (op, name).
SURFACE_OP_RULES: dict[tuple[str, str], Rule] = {}
