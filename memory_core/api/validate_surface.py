"""The rules of the seed-surface ops' arguments (by-id ops, scope-wide ops, categories and links,
observation capture, lineage and summaries, learnings): merged into ``validate.TOOL_RULES`` and
``validate.OP_RULES``. A name shared with an older op means the same thing in both."""

from __future__ import annotations

from typing import Any

from ..write.categories import MAX_DESCRIPTION_CHARS, category_name
from .boundary import Rule
from .rule_kinds import _flag, _integer, _key, _later, _optional_key, _scope, _text  # noqa: F401  (the kinds the lanes below use)


def _category_name(value: Any, field: str, nullable: bool) -> None:
    """A category's name or a link's relation (``write.categories.category_name``)."""
    category_name(value, field)


# The Memory tool's arguments, by name.
SURFACE_RULES: dict[str, Rule] = {
    "id": _text(max_chars=200),  # a fact id or a version id (by-id ops)
    "learning_id": _text(max_chars=200),  # learnings
    "accept": _flag,
    "session_id": _text(max_chars=200),  # observation capture: extraction.observe.check_session_id
    "observations": _later,  # observation capture: extraction.observe.check_observations
}
# categories and links (api/categories_ops.py)
SURFACE_RULES["category"] = _category_name
SURFACE_RULES["description"] = _text(max_chars=MAX_DESCRIPTION_CHARS)
SURFACE_RULES["other_key"] = _key
SURFACE_RULES["rescind"] = _flag
SURFACE_RULES["unlink"] = _flag
# scope-wide ops (api/scope_ops.py)
SURFACE_RULES["change_id"] = _text(max_chars=200)  # the change id a clear answered
SURFACE_RULES["to_scope"] = _scope
# An argument whose name means something else in another op: (op, name).
SURFACE_OP_RULES: dict[tuple[str, str], Rule] = {
    ("category_define", "name"): _category_name,
    ("link", "relation"): _category_name,
    ("categories", "key"): _optional_key,
    ("verify", "key"): _optional_key,  # verify names a key or an id
}
