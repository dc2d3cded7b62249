"""The pure timeline decisions: restatement, closing, retiring, and what survives a correction."""

from datetime import timedelta

from memory_core.timeline import FactState, fact_at, overlapping_pairs, plan_statement
from tests.conftest import utc

JAN, MAR, MAY, JUL, SEP = utc(2024, 1, 1), utc(2024, 3, 1), utc(2024, 5, 1), utc(2024, 7, 1), utc(2024, 9, 1)


def fact(fid: str, sha: str, start, end=None) -> FactState:
    return FactState(fid, sha, start, end)


def test_same_value_live_at_valid_at_is_a_restatement():
    plan = plan_statement([fact("a", "x", JAN)], "x", MAY, None, invalid_at_given=False)
    assert plan.restates == "a" and plan.closes == ()


def test_same_value_with_a_new_end_is_a_new_statement_not_a_restatement():
    plan = plan_statement([fact("a", "x", JAN)], "x", MAY, SEP, invalid_at_given=True)
    assert plan.restates is None
    assert plan.closes == (("a", MAY),)


def test_unspecified_end_inherits_the_live_facts_end_for_restatement():
    plan = plan_statement([fact("a", "x", JAN, SEP)], "x", MAY, None, invalid_at_given=False)
    assert plan.restates == "a"


def test_a_change_closes_the_fact_live_at_its_valid_at():
    plan = plan_statement([fact("a", "x", JAN)], "y", MAY, None, invalid_at_given=False)
    assert plan.closes == (("a", MAY),)


def test_a_correction_from_the_same_start_retires_the_old_fact():
    plan = plan_statement([fact("a", "x", MAR)], "y", MAR, None, invalid_at_given=False)
    assert plan.closes == (("a", MAR),)  # empty interval: it was never true in the new belief


def test_history_before_and_known_future_after_an_interval_survive():
    facts = [fact("old", "x", JAN, MAR), fact("future", "z", SEP)]
    plan = plan_statement(facts, "y", MAY, JUL, invalid_at_given=True)
    assert plan.closes == ()


def test_a_fact_starting_inside_the_new_interval_is_retired():
    plan = plan_statement([fact("a", "x", MAY, JUL)], "y", MAR, SEP, invalid_at_given=True)
    assert plan.closes == (("a", MAY),)


def test_fact_at_and_overlaps():
    facts = [fact("a", "x", JAN, MAR), fact("b", "y", MAR), fact("r", "z", MAY, MAY)]
    assert fact_at(facts, MAR - timedelta(seconds=1)).fact_id == "a"
    assert fact_at(facts, MAR).fact_id == "b"
    assert overlapping_pairs(facts) == []
    assert overlapping_pairs([fact("a", "x", JAN, MAY), fact("b", "y", MAR)]) == [("a", "b")]
