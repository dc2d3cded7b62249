"""Settle a recall/search request from the tool's arguments: typed errors, nothing read."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable

from ..errors import InvalidInput
from ..identity import Scope
from ..model import Kind
from ..temporal import parse_instant
from .recipes import get_recipe
from .types import SearchRequest

MAX_K = 1000


def settle(
    query: Any,
    now: datetime,
    *,
    scope: str | Scope,
    k: Any,
    recipe: str,
    as_of: Any,
    sources: Iterable[str | Kind],
    observed_from: Any,
    observed_to: Any,
    token_budget: Any,
    participants: Iterable[str] = (),
) -> SearchRequest:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query must be a non-empty string", field="query")
    if isinstance(k, bool) or not isinstance(k, int) or not 0 < k <= MAX_K:
        raise InvalidInput(f"k must be an integer between 1 and {MAX_K}, got {k!r}", field="k")
    if token_budget is not None and (
        isinstance(token_budget, bool) or not isinstance(token_budget, int) or token_budget <= 0
    ):
        raise InvalidInput("token_budget must be a positive integer", field="token_budget")
    get_recipe(recipe)
    kinds = frozenset(Kind.parse(s) for s in sources)
    if not kinds:
        raise InvalidInput("sources must name at least one of fact, note, document", field="sources")
    when = parse_instant(as_of, "as_of") or now
    return SearchRequest(
        query=query.strip(),
        scope=Scope.parse(scope),
        k=k,
        recipe=recipe,
        sources=kinds,
        as_of=when,
        observed_from=parse_instant(observed_from, "observed_from"),
        observed_to=parse_instant(observed_to, "observed_to"),
        token_budget=token_budget,
        participants=_participants(participants),
    )


def _participants(names: Iterable[str]) -> tuple[str, ...]:
    if isinstance(names, str):
        raise InvalidInput("participants must be a list of names, not one string", field="participants")
    out = tuple(n.strip() for n in names)
    if any(not isinstance(n, str) or not n for n in out):
        raise InvalidInput("participants must be non-empty names", field="participants")
    return out
