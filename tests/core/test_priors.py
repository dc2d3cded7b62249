"""Query priors and score fusion: dates named in a query, participants, z-score fusion."""

from datetime import date

import pytest

from memory_core import Identity, Memory
from memory_core.retrieval.priors import date_match, dates_in, named_participants, without_participants
from tests.conftest import utc


def test_dates_in_a_query():
    assert [(s.kind, s.start, s.end) for s in dates_in("What did she do on 8 May, 2023?")] == [
        ("day", date(2023, 5, 8), date(2023, 5, 8))
    ]
    assert dates_in("plans for May 8th, 2023")[0].start == date(2023, 5, 8)
    (month,) = dates_in("What happened in February 2024?")
    assert (month.kind, month.start, month.end) == ("month", date(2024, 2, 1), date(2024, 2, 29))
    assert dates_in("a trip in 2022")[0].kind == "year"
    assert dates_in("what is her favourite colour?") == []
    assert [s.kind for s in dates_in("on 31 February, 2023")] == ["month"]  # no such day: the month


def test_date_match_window_and_exact_day_bonus():
    spans = dates_in("on 8 May, 2023")
    assert date_match(spans, utc(2023, 5, 8)) == 1.5
    assert date_match(spans, utc(2023, 5, 1)) == 1.0 and date_match(spans, utc(2023, 5, 22)) == 1.0
    assert date_match(spans, utc(2023, 4, 30)) == 0.0 and date_match(spans, utc(2023, 5, 23)) == 0.0
    assert date_match([], utc(2023, 5, 8)) == 0.0 and date_match(spans, None) == 0.0


def test_participants_are_found_and_stripped():
    names = ("Caroline", "Melanie")
    assert named_participants("When did Caroline's sister visit?", names) == ["Caroline"]
    assert named_participants("Did Melanie and Caroline meet?", names) == ["Caroline", "Melanie"]
    assert without_participants("When did Caroline's sister visit?", names) == "When did sister visit?"
    assert without_participants("Caroline", names) == "Caroline"  # never an empty query


def test_zscore_recipe_uses_subject_and_date_priors(tmp_path):
    with Memory.open(tmp_path / "h", embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="t", user="conv"))
        tool.set(
            "D1:1",
            "I went hiking in the hills",
            subject="Ana",
            observed_at=utc(2023, 5, 8),
            valid_at=utc(2023, 5, 8),
            kind="note",
        )
        tool.set(
            "D2:1",
            "I went hiking in the hills",
            subject="Ben",
            observed_at=utc(2023, 9, 1),
            valid_at=utc(2023, 9, 1),
            kind="note",
        )
        people = ("Ana", "Ben")
        by_ben = tool.recall("Where did Ben go hiking?", recipe="hybrid_zscore", participants=people)
        assert by_ben.hits[0].key == "D2:1" and by_ben.recipe["fusion"] == "zscore"
        in_may = tool.recall("Who went hiking on 8 May, 2023?", recipe="hybrid_zscore", participants=people)
        assert in_may.hits[0].key == "D1:1"


def test_context_is_found_by_bm25_but_is_not_the_value(tmp_path):
    with Memory.open(tmp_path / "h", embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="t", user="u"))
        tool.set("D1:2", "It was wonderful, thanks!", subject="Ben", context="How was the trip to Kyoto?")
        hit = tool.recall("Kyoto trip", recipe="bm25_only").hits[0]
        assert hit.key == "D1:2" and hit.value == "It was wonderful, thanks!"
        fact = tool.get("D1:2")
        assert fact.subject == "Ben" and fact.index_context == "How was the trip to Kyoto?"


@pytest.mark.parametrize("bad", ["Ana", [""]])
def test_participants_must_be_names(tmp_path, bad):
    from memory_core.errors import InvalidInput

    with Memory.open(tmp_path / "h", embedder="hashing") as memory:
        with pytest.raises(InvalidInput):
            memory.for_run(Identity(tenant="t", user="u")).recall("x", participants=bad)
