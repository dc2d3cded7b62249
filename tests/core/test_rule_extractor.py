"""The rule-based extractor: first-person statements, kin names, dates and pronouns."""

from datetime import datetime, timezone

import pytest

from memory_core.extraction.model import parse_messages
from memory_core.extraction.rules import RuleExtractor, resolve_date

SESSION = datetime(2024, 3, 10, 15, tzinfo=timezone.utc)


def facts(*texts, role="user", name="Caroline"):
    turns = parse_messages([{"role": role, "name": name, "content": t} for t in texts])
    return RuleExtractor().extract(turns, session_date=SESSION).facts


def one(text):
    [fact] = facts(text)
    return fact


@pytest.mark.parametrize(
    "text, key, relation",
    [
        ("I live in Lisbon.", "caroline:lives_in", ("Caroline", "lives_in", "Lisbon")),
        ("I just moved to New York City!", "caroline:lives_in", ("Caroline", "lives_in", "New York City")),
        ("I work at Acme Robotics, it's great.", "caroline:works_at", ("Caroline", "works_at", "Acme Robotics")),
        ("My sister's name is Maya.", "caroline:sister_name", ("Caroline", "has_sister", "Maya")),
        ("I have a dog named Rex.", "caroline:dog_name", ("Caroline", "has_dog", "Rex")),
        ("I'm 34 years old.", "caroline:age", ("Caroline", "age", "34")),
        ("My favorite band is The Cure.", "caroline:favorite_band", ("Caroline", "favorite_band", "The Cure")),
        (
            "I love hiking in the mountains.",
            "caroline:likes:hiking-in-the-mountains",
            ("Caroline", "likes", "hiking in the mountains"),
        ),
        ("I am a software engineer.", "caroline:occupation", ("Caroline", "works_as", "software engineer")),
    ],
)
def test_first_person_statements_name_subject_and_attribute_never_the_value(text, key, relation):
    fact = one(text)
    assert (fact.key, fact.relation) == (key, relation)
    assert fact.quote in text and text[fact.span[0] : fact.span[1]] == fact.quote


def test_a_later_statement_of_an_attribute_has_the_same_key():
    assert one("I live in Lisbon.").key == one("I moved to Porto.").key


def test_dates_resolve_against_the_session_date():
    assert one("I started at Globex in 2023.").valid_from == datetime(2023, 1, 1, tzinfo=timezone.utc)
    assert one("I moved to Lisbon last year.").valid_from == datetime(2023, 1, 1, tzinfo=timezone.utc)
    assert one("I moved to Lisbon in May.").valid_from == datetime(2023, 5, 1, tzinfo=timezone.utc)
    assert one("I moved to Lisbon in January.").valid_from == datetime(2024, 1, 1, tzinfo=timezone.utc)
    assert one("I moved to Lisbon three weeks ago.").valid_from == datetime(2024, 2, 18, tzinfo=timezone.utc)
    assert one("I moved to Lisbon yesterday.").valid_from == datetime(2024, 3, 9, tzinfo=timezone.utc)
    assert one("I live in Lisbon.").valid_from is None
    assert resolve_date("last month", SESSION) == datetime(2024, 2, 1, tzinfo=timezone.utc)
    assert resolve_date("two years ago", None) is None  # a relative date needs the session date


def test_pronouns_resolve_against_the_text_given():
    found = facts("My sister's name is Maya. She lives in Oslo.")
    assert [f.relation for f in found] == [("Caroline", "has_sister", "Maya"), ("Maya", "lives_in", "Oslo")]
    assert facts("She lives in Oslo.") == ()  # nothing in the text to resolve "she" to


def test_questions_assistants_and_memories_state_nothing():
    assert facts("Do I live in Paris?") == ()
    assert facts("I live in Paris.", role="assistant", name="helper") == ()
    assert facts("Caroline lives in Paris.", role="memory", name="memory") == ()


def test_an_anonymous_user_is_the_user():
    turns = parse_messages([{"role": "user", "content": "I live in Lisbon."}])
    [fact] = RuleExtractor().extract(turns, session_date=None).facts
    assert fact.key == "user:lives_in" and fact.value == "The user lives in Lisbon"
