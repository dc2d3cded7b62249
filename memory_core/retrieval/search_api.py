"""Settle a recall/search request from the tool's arguments, then run the pipeline."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Iterable

from ..errors import InvalidInput
from ..identity import Scope
from ..model import Kind
from ..temporal import parse_instant
from .pipeline import search
from .recipes import get_recipe
from .types import SearchRequest, SearchResult

if TYPE_CHECKING:
    from ..api import MemoryTool

MAX_K = 1000


def settle(
    tool: "MemoryTool",
    query: Any,
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
    when = parse_instant(as_of, "as_of") or tool._memory.clock.now()
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


def run_search(tool: "MemoryTool", query: Any, **kwargs: Any) -> SearchResult:
    request = settle(tool, query, **kwargs)
    namespace = tool.identity.namespace(request.scope)  # refuses a scope the run may not read
    memory = tool._memory
    projector = memory.projector
    projector.flush()  # read-your-writes: queued index changes land before the legs run
    result = search(
        projector.index, projector.embedder, namespace, request, get_recipe(request.recipe), memory.clock.now()
    )
    waiting = memory.store.pending_projection_failures(namespace)
    if waiting:
        note = f"{len(waiting)} write(s) in this scope are not in the index yet (recorded for repair)"
        result = dataclasses.replace(result, notes=result.notes + (note,))
    queued = memory.store.unfinished_jobs(namespace)
    if queued:  # a conversation of this scope is still waiting to be read: the answer may be missing it
        result = dataclasses.replace(
            result,
            pending_extraction=queued,
            notes=result.notes + (f"{queued} extraction job(s) for this scope are still queued",),
        )
    return result
