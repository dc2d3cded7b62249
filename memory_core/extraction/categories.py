"""The namespace's category taxonomy in extraction: ``fetch_namespace_categories`` loads it (first
in the default steps), and ``bulk_write`` ends by giving each fact it wrote the categories it
matches (``categorize_written``), through the tool, which adds only pairs never stored: a
category link the owner rescinded stays rescinded.

The match is words, deterministic and offline, the same for every extractor: a category matches a
fact when one of its terms (the words of its name, and of its description) is a word of the
fact's key, value or relation, a trailing plural ``s`` aside. Words under three letters and a few
common ones are no terms. A taxonomy the namespace has not defined assigns nothing.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence, cast

from .model import Extracted

if TYPE_CHECKING:
    from .pipeline import ExtractionState, StepContext

_WORD = re.compile(r"[^\W_]+")
_COMMON = frozenset(
    {"the", "and", "for", "with", "about", "from", "that", "this", "their", "such", "like", "user", "users", "other"}
)


class CategoryTool(Protocol):
    """What these steps ask of the run that extracts (``services.extraction``'s step writer)."""

    def namespace_categories(self, *, scope: Any = ...) -> list[tuple[str, str | None]]: ...

    def categorize(self, wanted: Mapping[str, Sequence[str]], *, scope: Any = ...) -> list[tuple[str, str]]: ...


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _words(text: str) -> set[str]:
    return {_stem(w) for w in (m.group(0).casefold() for m in _WORD.finditer(text))}


def terms(name: str, description: str | None) -> set[str]:
    """The words that make a fact match a category."""
    found = _words(name.replace("-", " ").replace("_", " ")) | _words(description or "")
    return {t for t in found if len(t) >= 3 and t not in _COMMON}


def match_categories(fact: Extracted, taxonomy: Sequence[tuple[str, str | None]]) -> tuple[str, ...]:
    """The taxonomy's categories ``fact`` matches, in taxonomy order."""
    said = _words(" ".join([fact.key.replace(":", " "), fact.attribute, fact.value, *(fact.relation or ())]))
    return tuple(name for name, description in taxonomy if terms(name, description) & said)


def fetch_namespace_categories(state: ExtractionState, ctx: StepContext) -> None:
    """Load the namespace's category taxonomy (name, description) onto the state. A step tool that
    keeps no taxonomy (an operator's own) leaves it empty: nothing is categorized."""
    load = getattr(ctx.tool, "namespace_categories", None)
    state.categories = tuple(load(scope=ctx.scope)) if callable(load) else ()


def categorize_written(state: ExtractionState, ctx: StepContext) -> None:
    """Give each fact the bulk write stored (or found stored unchanged) the categories it matches.
    Nothing on a dry run or without a taxonomy."""
    if ctx.dry_run or not state.categories or state.written is None:
        return
    refused = {*state.written.skipped_pinned, *state.written.skipped_locked, *state.written.rejected}
    wanted = {
        f.key: found for f in state.facts if f.key not in refused and (found := match_categories(f, state.categories))
    }
    if wanted:
        cast(CategoryTool, ctx.tool).categorize(wanted, scope=ctx.scope)
