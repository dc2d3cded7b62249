"""``view = render(substrate, lens, frame)`` and ``get_context``'s passes, as pure functions over
items.

``admit`` is the view's one rule: an item is in it when its scope is one the call reads, the frame
does not suppress it, and at least one worn lens admits it; nothing else (no ranking cut, no
budget) removes an item from a view, so wearing one more lens can only add to it.

``select`` is ``get_context``'s: rank what was admitted (``rank``), take the best items that fit
the token budget, then re-query with what they surfaced (berrypicking): each next pass looks for
items holding the names the last pass's items named, until a pass finds nothing new that fits or
the passes run out. The narrowest scope's item of a key shadows the broader ones first (agent,
then user, tenant, global), as a project's lesson overrides the organisation's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Iterable, Mapping, Sequence

from ..identity import Scope
from .items import Item
from .lenses import SCOPE_ORDER, Lens, Worn, admits_row
from .rank import Factors, ranked

FACT_PLANES = ("fact", "note", "document")
MAX_PASSES = 5


def admit(
    items: Iterable[Item], worn: Worn, scopes: frozenset[Scope], suppressed: frozenset[str]
) -> dict[str, tuple[Lens, ...]]:
    """The admitted items' refs, each with the worn lenses that admit it."""
    out: dict[str, tuple[Lens, ...]] = {}
    for item in items:
        if item.scope not in scopes or item.ref in suppressed:
            continue
        by = tuple(lens for lens in worn.lenses if admits_row(lens, **item.shape()))
        if by:
            out[item.ref] = by
    return out


def shadow(items: Sequence[Item]) -> tuple[list[Item], dict[str, str]]:
    """Each key's narrowest-scope item among facts, notes and documents (and every other item);
    beside it, the refs shadowed, each with the ref that shadowed it."""
    best: dict[tuple[str, str], Item] = {}
    for item in items:
        if item.plane not in FACT_PLANES:
            continue
        slot = (item.plane, item.key)
        held = best.get(slot)
        if held is None or SCOPE_ORDER.index(item.scope) < SCOPE_ORDER.index(held.scope):
            best[slot] = item
    kept, hidden = [], {}
    for item in items:
        winner = best.get((item.plane, item.key)) if item.plane in FACT_PLANES else item
        if winner is item:
            kept.append(item)
        else:
            hidden[item.ref] = winner.ref
    return kept, hidden


@dataclass(frozen=True, slots=True)
class Chosen:
    item: Item
    tokens: int
    factors: Factors
    found_in_pass: int
    lenses: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PassTrace:
    number: int
    terms: tuple[str, ...]
    candidates: int
    taken: int


@dataclass(frozen=True, slots=True)
class IndexLine:
    ref: str
    text: str
    tokens: int


@dataclass(frozen=True, slots=True)
class Selection:
    chosen: tuple[Chosen, ...]
    left_out: tuple[Chosen, ...]  # matched in some pass, did not fit
    index: tuple[IndexLine, ...]
    passes: tuple[PassTrace, ...]
    tokens_used: int


def select(
    items: Sequence[Item],
    admitted: Mapping[str, tuple[Lens, ...]],
    first_terms: frozenset[str],
    budget: int,
    tokens: Mapping[str, int],
    now: datetime,
    *,
    max_passes: int = 3,
    include_index: bool = False,
    count: Callable[[str], int] = len,
) -> Selection:
    """Fit the best admitted items into ``budget`` tokens over up to ``max_passes`` passes.
    ``tokens``: each item's cost by ref; ``count``: the cost of an index line."""
    pool = [i for i in items if i.ref in admitted]
    taken: dict[str, Chosen] = {}
    seen: dict[str, Chosen] = {}
    traces: list[PassTrace] = []
    used = 0
    terms, asked = first_terms, set(first_terms)
    for number in range(1, max(1, min(max_passes, MAX_PASSES)) + 1):
        candidates = [i for i in pool if i.ref not in taken and (not terms or i.terms & terms)]
        this_pass = []
        for item, found in ranked(candidates, admitted, terms, tokens, now):
            entry = Chosen(item, tokens[item.ref], found, number, tuple(lens.lens_id for lens in admitted[item.ref]))
            seen.setdefault(item.ref, entry)
            if used + entry.tokens <= budget:
                used += entry.tokens
                taken[item.ref] = entry
                this_pass.append(item)
        traces.append(PassTrace(number, tuple(sorted(terms)), len(candidates), len(this_pass)))
        if not terms or not this_pass:
            break  # everything was ranked at once, or nothing new fits
        # Re-query from what this pass surfaced: the names its items hold that no pass asked yet.
        terms = frozenset(a for item in this_pass for a in item.anchors) - asked
        if not terms:
            break
        asked |= terms
    left = sorted((c for ref, c in seen.items() if ref not in taken), key=lambda c: (-c.factors.score, c.item.ref))
    index = []
    if include_index:
        for entry in left:
            line = f"{entry.item.ref} {entry.item.key[:80]} ({entry.tokens} tokens)"
            cost = max(1, count(line))
            if used + cost <= budget:
                used += cost
                index.append(IndexLine(entry.item.ref, line, cost))
    chosen = sorted(taken.values(), key=lambda c: (c.found_in_pass, -c.factors.score, c.item.ref))
    return Selection(tuple(chosen), tuple(left), tuple(index), tuple(traces), used)
