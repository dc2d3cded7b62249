"""get_context's selection as a pure function: over random items, budgets, queries and passes it
never spends more tokens than its budget, takes each item once, and keeps what it took apart
from what it left out."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.identity import Scope
from memory_core.substrate.context import select
from memory_core.substrate.items import Item, anchors_of, terms_of
from memory_core.substrate.lenses import Lens

NOW = datetime(2024, 6, 1, tzinfo=timezone.utc)
WORDS = ["checkout", "Atlas", "timeout", "cache", "Redis", "deploy", "Friday", "p95", "rota", "P7"]


def _item(n: int, words: list[str], age_days: int) -> Item:
    text = " ".join(words)
    return Item(
        ref=f"fact:f{n}",
        plane="fact",
        scope=Scope.USER,
        owner_id="ana",
        key=f"k{n}",
        text=f"k{n}: {text}",
        value=text,
        entity_type="lesson",
        relation=None,
        lens_id=None,
        frame_id=None,
        sensitivity="normal",
        subject=None,
        version_id=f"v{n}",
        content_sha256="0" * 64,
        valid_at=NOW - timedelta(days=age_days),
        confidence=1.0,
        terms=terms_of(text),
        anchors=anchors_of(text),
    )


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=40), min_size=0, max_size=25),
    ages=st.lists(st.integers(0, 400), min_size=25, max_size=25),
    budget=st.integers(1, 400),
    query=st.lists(st.sampled_from(WORDS), max_size=3),
    passes=st.integers(1, 5),
    index=st.booleans(),
)
def test_the_selection_never_exceeds_its_budget(texts, ages, budget, query, passes, index):
    items = [_item(n, words, ages[n]) for n, words in enumerate(texts)]
    lens = Lens("dev", "acme", 1, "dev")
    tokens = {i.ref: max(1, len(i.text) // 3) for i in items}
    chosen = select(
        items,
        {i.ref: (lens,) for i in items},
        terms_of(" ".join(query)),
        budget,
        tokens,
        NOW,
        max_passes=passes,
        include_index=index,
        count=lambda line: max(1, len(line) // 3),
    )
    spent = sum(c.tokens for c in chosen.chosen) + sum(line.tokens for line in chosen.index)
    assert spent == chosen.tokens_used <= budget
    assert len({c.item.ref for c in chosen.chosen}) == len(chosen.chosen)  # each item once
    assert not {c.item.ref for c in chosen.chosen} & {c.item.ref for c in chosen.left_out}
    assert len(chosen.passes) <= passes
