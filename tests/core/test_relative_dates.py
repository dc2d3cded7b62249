"""Relative dates in a query resolve against the day the query names, else its as_of."""

from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core import Identity, Memory
from memory_core.retrieval.priors import dates_in
from memory_core.retrieval.relative_dates import event_offsets, from_event, relative_spans
from tests.conftest import utc

WED = date(2024, 5, 15)  # a Wednesday


def spans(query, anchor=WED):
    return [(s.kind, s.start, s.end) for s in relative_spans(query, anchor)]


@pytest.mark.parametrize(
    "query, expected",
    [
        ("what did I do yesterday?", [("day", date(2024, 5, 14), date(2024, 5, 14))]),
        ("and the day before yesterday", [("day", date(2024, 5, 13), date(2024, 5, 13))]),
        ("what happened last week", [("week", date(2024, 5, 6), date(2024, 5, 12))]),
        ("plans for this week", [("week", date(2024, 5, 13), date(2024, 5, 19))]),
        ("last weekend", [("week", date(2024, 5, 11), date(2024, 5, 12))]),
        ("what did we buy last month", [("month", date(2024, 4, 1), date(2024, 4, 30))]),
        ("a trip last year", [("year", date(2023, 1, 1), date(2023, 12, 31))]),
        ("last Friday", [("day", date(2024, 5, 10), date(2024, 5, 10))]),
        ("last Wednesday", [("day", date(2024, 5, 8), date(2024, 5, 8))]),  # never the anchor itself
        ("last May", [("month", date(2023, 5, 1), date(2023, 5, 31))]),
        ("last April", [("month", date(2024, 4, 1), date(2024, 4, 30))]),
        ("three days ago", [("day", date(2024, 5, 12), date(2024, 5, 12))]),
        ("two weeks ago", [("week", date(2024, 4, 28), date(2024, 5, 4))]),
        ("a month ago", [("month", date(2024, 4, 1), date(2024, 4, 30))]),
        ("4 years ago", [("year", date(2020, 1, 1), date(2020, 12, 31))]),
        ("in the last 3 weeks", [("range", date(2024, 4, 24), WED)]),
        ("the week before", [("week", date(2024, 5, 8), date(2024, 5, 14))]),
        ("during the last week of August", []),  # a week of a month, not last week
        ("this past weekend", [("week", date(2024, 5, 11), date(2024, 5, 12))]),  # the one gone by
        ("plans for this December", [("month", date(2024, 12, 1), date(2024, 12, 31))]),
        ("I hope this may help", []),  # the verb, not the month
        ("what about this May", [("month", date(2024, 5, 1), date(2024, 5, 31))]),
        ("what is her favourite colour?", []),
    ],
)
def test_relative_phrases(query, expected):
    assert spans(query) == expected


def test_an_explicit_day_anchors_the_relative_phrase_and_stays_a_span_of_its_own():
    named = dates_in("What puppy did she get two weeks before August 11, 2023?", reference=WED)
    assert [(s.kind, s.start) for s in named] == [("day", date(2023, 8, 11)), ("week", date(2023, 7, 25))]
    weekend = dates_in("What did Maria do last weekend before April 10, 2023?", reference=WED)
    assert (weekend[1].start, weekend[1].end) == (date(2023, 4, 8), date(2023, 4, 9))
    assert dates_in("what did I do yesterday?") == []  # no day to count from
    # counted from an event, not from as_of: not read (the planner does not resolve events)
    assert dates_in("what did we buy two weeks before the wedding?", reference=WED) == []
    assert dates_in("and the day after the party?", reference=WED) == []
    assert [s.kind for s in dates_in("three days ago", reference=WED)] == ["day"]


@pytest.mark.parametrize(
    "query", ["what did I do yesterday", "last week", "3 January, 0001", "May 0000", "December 9999"]
)
def test_dates_at_the_ends_of_the_calendar_never_raise(query):
    from memory_core.retrieval.priors import date_match

    for reference in (date(1, 1, 2), date(9999, 12, 30)):
        for span in dates_in(query, reference=reference):
            date_match([span], utc(2024, 1, 1))


@settings(max_examples=300, deadline=None)
@given(
    st.dates(min_value=date(1900, 1, 1), max_value=date(2200, 1, 1)),
    st.integers(1, 99),
    st.sampled_from(["day", "week", "month", "year"]),
)
def test_n_units_ago_holds_the_day_n_units_back(anchor, n, unit):
    (span,) = relative_spans(f"{n} {unit}s ago", anchor)
    assert span.start <= span.end
    back = {"day": timedelta(days=n), "week": timedelta(weeks=n)}.get(unit)
    if back is not None:
        assert span.start <= anchor - back <= span.end
    elif unit == "year":
        assert span.start.year == anchor.year - n
    else:
        months = anchor.year * 12 + anchor.month - 1 - n
        assert (span.start.year, span.start.month) == (months // 12, months % 12 + 1)


def test_recall_counts_yesterday_from_its_as_of(tmp_path):
    with Memory.open(tmp_path / "h", embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="t", user="u"))
        tool.set("a", "went for a long swim in the lake", kind="note", valid_at=utc(2024, 5, 14))
        tool.set("b", "went for a long swim in the lake", kind="note", valid_at=utc(2024, 3, 2))
        result = tool.recall("where did I swim yesterday?", as_of=utc(2024, 5, 15, 12))
        by_key = {h.key: h for h in result.hits}
        assert by_key["a"].terms["date_prior"] > 0 == by_key["b"].terms["date_prior"]
        assert result.hits[0].key == "a"


@pytest.mark.parametrize(
    "query, event, span",
    [
        ("what did I buy two weeks before the wedding?", "wedding", ("week", date(2024, 4, 28), date(2024, 5, 4))),
        ("where was I the day after her graduation party", "graduation party", ("day", WED + timedelta(1), None)),
        ("3 days after the launch of the app and why", "launch of the app", ("day", date(2024, 5, 18), None)),
        ("the week before the move to Lisbon?", "move", ("week", date(2024, 5, 8), date(2024, 5, 14))),
    ],
)
def test_a_phrase_counted_from_an_event_waits_for_the_events_day(query, event, span):
    (offset,) = event_offsets(query)
    assert offset.event == event and offset.phrase in query and offset.phrase.endswith(event)
    counted = from_event(offset, WED)
    assert (counted.kind, counted.start, counted.end if span[2] else None) == span
    assert dates_in(query, WED) == []  # never counted from the query's own as_of


def test_a_count_before_a_day_the_query_names_is_no_event():
    assert event_offsets("two weeks before 8 May, 2023") == []
    assert event_offsets("How did Melanie feel after the accident?") == []  # no count: no span


def test_recall_counts_from_the_day_of_the_event_it_names(tmp_path):
    with Memory.open(tmp_path / "h", embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="t", user="u"))
        tool.set("wedding", "our wedding in Porto with the whole family", kind="note", valid_at=utc(2024, 6, 22))
        tool.set("rings", "bought the rings at the jeweller", kind="note", valid_at=utc(2024, 6, 8))
        tool.set("bike", "bought a new bike at the shop", kind="note", valid_at=utc(2024, 2, 3))
        tool.set("lamp", "bought a lamp at the market", kind="note", valid_at=utc(2024, 10, 9))
        result = tool.recall("what did I buy two weeks before the wedding?", as_of=utc(2024, 12, 1))
        by_key, order = {h.key: h for h in result.hits}, [h.key for h in result.hits]
        # the purchase two weeks before the wedding's day outranks the others; the wedding is found by its word
        assert order.index("rings") < min(order.index("bike"), order.index("lamp"))
        assert by_key["rings"].terms["date_prior"] > 0
        assert by_key["bike"].terms.get("date_prior", 0) == 0 == by_key["lamp"].terms.get("date_prior", 0)
        (anchor,) = tool.search_trace(result.trace_id).plan["event_anchors"]
        assert anchor["event"] == "wedding" and anchor["day"] == "2024-06-22"
        assert anchor["fact_id"] == by_key["wedding"].fact_id and anchor["span"] == ["2024-06-05", "2024-06-11"]
