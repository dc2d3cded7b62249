"""Text rules of the write-time peer verdict: words, templated substitution, canonical form, values."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.write.templates import (
    Substitution,
    canonical_form,
    content_words,
    substitution,
    values_differ,
    words,
)

# --- words -------------------------------------------------------------------------------------

WORD_CASES = [
    pytest.param("User prefers dark mode.", ("user", "prefers", "dark", "mode"), id="latin-lowercased"),
    pytest.param("Italy’s capital", ("italy's", "capital"), id="curly-apostrophe-is-straight"),
    pytest.param("Macy's is crowded", ("macy's", "is", "crowded"), id="possessive-stays-attached"),
    pytest.param("It cost 1,000 dollars", ("it", "cost", "1,000", "dollars"), id="comma-between-digits"),
    pytest.param("about 3.5 kg", ("about", "3.5", "kg"), id="dot-between-digits"),
    pytest.param("I live in St. Louis.", ("i", "live", "in", "st.", "louis"), id="abbreviation-dot"),
    pytest.param("Dr. Who met J. K. Rowling", ("dr.", "who", "met", "j.", "k.", "rowling"), id="initials"),
    pytest.param("I like Plan B.", ("i", "like", "plan", "b"), id="sentence-final-dot-is-punctuation"),
    pytest.param("Austin, Texas; fine!", ("austin", "texas", "fine"), id="comma-between-words-separates"),
    pytest.param("I love 🍕!", ("i", "love", "🍕"), id="emoji-is-a-word"),
    pytest.param("🍕🍣", ("🍕", "🍣"), id="each-emoji-is-a-word"),
    pytest.param("ok 👍🏽 ❤️", ("ok", "👍🏽", "❤️"), id="emoji-keeps-modifiers"),
    pytest.param('He said "yes" (twice)', ("he", "said", '"', "yes", '"', "twice"), id="quote-is-a-word"),
    pytest.param("$5 for 50%", ("$", "5", "for", "50", "%"), id="signs-are-words"),
    pytest.param("東京に住んでいます。", ("東京に住んでいます",), id="japanese-run-is-one-word"),
    pytest.param("我住在北京 now", ("我住在北京", "now"), id="han-run-then-latin"),
    pytest.param("สวัสดีครับ ผม", ("สวัสดีครับ", "ผม"), id="thai-runs"),
    pytest.param("मैं हिन्दी बोलता हूँ", ("मैं", "हिन्दी", "बोलता", "हूँ"), id="hindi-virama-and-vowel-signs"),
    pytest.param("Он живёт в Москве", ("он", "живёт", "в", "москве"), id="cyrillic"),
    pytest.param("Η Αθήνα", ("η", "αθήνα"), id="greek"),
    pytest.param(
        "a well-known 2024-05-01 at 3:30pm",
        ("a", "well-known", "2024-05-01", "at", "3:30pm"),
        id="hyphen-date-time-inside",
    ),
    pytest.param("ＡＢＣ　１２３", ("abc", "123"), id="nfkc-fullwidth"),
    pytest.param("", (), id="empty"),
]


@pytest.mark.parametrize("text, expected", WORD_CASES)
def test_words(text, expected):
    assert words(text) == expected


# --- substitution ------------------------------------------------------------------------------

PAIRS = [
    pytest.param(
        "User prefers dark mode",
        "User prefers light mode",
        Substitution(("user", "prefers"), ("dark",), ("light",), ("mode",)),
        id="one-shared-head-word",
    ),
    pytest.param(
        "prefers dark mode",
        "prefers light mode",
        Substitution(("prefers",), ("dark",), ("light",), ("mode",)),
        id="no-subject",
    ),
    pytest.param(
        "Bob drives a red sports car",
        "Bob drives a blue sports car",
        Substitution(("bob", "drives", "a"), ("red",), ("blue",), ("sports", "car")),
        id="shared-ending-after-article",
    ),
    pytest.param(
        "I work at Acme in London",
        "I work at Globex in London",
        Substitution(("i", "work", "at"), ("acme",), ("globex",), ("in", "london")),
        id="prepositional-detail-kept",
    ),
    pytest.param(
        "Alice is 30", "Alice is 31", Substitution(("alice", "is"), ("30",), ("31",), ()), id="bare-name-copula-numbers"
    ),
    pytest.param(
        "Italy's capital is Rome",
        "Italy's capital is Milan",
        Substitution(("italy's", "capital", "is"), ("rome",), ("milan",), ()),
        id="possessive-attribute",
    ),
    pytest.param(
        "Italy’s capital is Rome.",
        "Italy's capital is Milan",
        Substitution(("italy's", "capital", "is"), ("rome",), ("milan",), ()),
        id="possessive-attribute-curly",
    ),
    pytest.param(
        "My favourite colour is blue",
        "My favourite colour is red",
        Substitution(("my", "favourite", "colour", "is"), ("blue",), ("red",), ()),
        id="possessive-determiner-attribute",
    ),
    pytest.param(
        "The capital of France is Paris",
        "The capital of France is Lyon",
        Substitution(("the", "capital", "of", "france", "is"), ("paris",), ("lyon",), ()),
        id="article-of-attribute",
    ),
    pytest.param(
        "I live in Москва",
        "I live in Berlin",
        Substitution(("i", "live", "in"), ("москва",), ("berlin",), ()),
        id="mixed-scripts",
    ),
    pytest.param(
        "Ich wohne in Berlin",
        "Ich wohne in München",
        Substitution(("ich", "wohne", "in"), ("berlin",), ("münchen",), ()),
        id="german-place",
    ),
    pytest.param(
        "Alice is 30 years old",
        "Alice is 31 years old",
        Substitution(("alice", "is"), ("30",), ("31",), ("years", "old")),
        id="numbers-with-unit",
    ),
    pytest.param(
        "The meeting is at 3pm",
        "The meeting is at 4pm",
        Substitution(("the", "meeting", "is", "at"), ("3pm",), ("4pm",), ()),
        id="time-of-meeting",
    ),
    pytest.param(
        "Alice has 2 kids",
        "Alice has 3 kids",
        Substitution(("alice", "has"), ("2",), ("3",), ("kids",)),
        id="bare-name-have-numbers",
    ),
    pytest.param(
        "I live in New York City",
        "I live in Mexico City",
        Substitution(("i", "live", "in"), ("new", "york"), ("mexico",), ("city",)),
        id="spans-differ-in-length",
    ),
    pytest.param(
        "Son père est médecin",
        "Son père est avocat",
        Substitution(("son", "père", "est"), ("médecin",), ("avocat",), ()),
        id="possessive-determiner-fr",
    ),
]


@pytest.mark.parametrize("old, new, expected", PAIRS)
def test_substitution_pairs(old, new, expected):
    assert substitution(old, new) == expected
    reverse = substitution(new, old)
    assert reverse is not None and (reverse.old_span, reverse.new_span) == (expected.new_span, expected.old_span)


NON_PAIRS = [
    # Only the name is shared, and nothing after the spans: they are two predicates of one subject.
    ("Diego A. lives in Austin", "Diego A. has a job at Umbrella Labs"),
    ("I live in London", "I work at Acme"),
    ("Maya Lopez moved to Oslo", "Maya Lopez adopted a cat"),
    pytest.param(
        "Basketball was created in the country of Soviet Union",
        "Club Nouveau was created in the country of Soviet Union",
        id="different-subjects-share-ending",
    ),
    pytest.param(
        "The Basketball was created in Russia", "The Club Nouveau was created in Russia", id="only-article-shared"
    ),
    pytest.param("The cat is black", "The dog is black", id="subject-before-copula"),
    pytest.param("The capital of Soviet Union is Moscow", "The capital of Italy is Rome", id="span-holds-copula"),
    pytest.param("Alice lives in London", "Alice works in London", id="predicate-differs-en"),
    pytest.param("Он живёт в Москве", "Он работает в Москве", id="predicate-differs-ru"),
    pytest.param("Il habite à Paris", "Il travaille à Paris", id="predicate-differs-fr"),
    pytest.param("Er wohnt in Berlin", "Er arbeitet in Berlin", id="predicate-differs-de"),
    pytest.param(
        "Wang Xiaoming est âgé de 28 ans",
        "Wang Xiaoming est ingénieur logiciel",
        id="bare-name-copula-two-attributes-fr",
    ),
    pytest.param("У меня есть собака", "У меня есть кошка", id="have-two-attributes-ru"),
    pytest.param("I have a dog", "I have a cat", id="have-two-attributes-en"),
    pytest.param("Alice is tired", "Alice is hungry", id="bare-name-copula-two-states"),
    pytest.param("I'm tired", "I'm hungry", id="contracted-copula-two-states"),
    pytest.param("It's raining", "It's snowing", id="pronoun-contraction-two-states"),
    pytest.param("My cat sleeps", "My dog sleeps", id="only-determiner-shared"),
    pytest.param("User thinks Macy's is expensive", "User thinks Macy's is crowded", id="possessive-is-a-name"),
    pytest.param("Alice's brother lives in Rome", "Alice's sister lives in Rome", id="subject-noun-differs"),
    pytest.param("Alice likes tea", "Alice likes tea", id="identical"),
    pytest.param("User prefers dark mode.", "user  prefers Dark mode", id="same-canonical-form"),
    pytest.param("Alice likes tea", "Alice likes tea with milk", id="one-extends-the-other"),
    pytest.param("Alice likes cats", "Bob likes cats", id="no-shared-beginning"),
    pytest.param(
        "The meeting is at 3pm tomorrow morning",
        "The meeting is at 4pm tomorrow morning",
        id="shared-ending-not-a-detail",
    ),
]


@pytest.mark.parametrize("old, new", NON_PAIRS)
def test_substitution_does_not_pair(old, new):
    assert substitution(old, new) is None
    assert substitution(new, old) is None


_SAMPLE = st.lists(
    st.sampled_from(
        "alice bob is the a in at my capital of rome london 30 31 lives works prefers dark mode "
        "est у есть car red".split()
    ),
    max_size=7,
).map(" ".join)


@given(_SAMPLE, _SAMPLE)
def test_substitution_is_symmetric_and_never_pairs_a_text_with_itself(a, b):
    assert substitution(a, a) is None
    forward, backward = substitution(a, b), substitution(b, a)
    assert (forward is None) == (backward is None)
    if forward is not None:
        assert (forward.shared_prefix, forward.shared_suffix) == (backward.shared_prefix, backward.shared_suffix)
        assert (forward.old_span, forward.new_span) == (backward.new_span, backward.old_span)
        assert forward.shared_prefix and forward.old_span and forward.new_span


def test_substitution_is_frozen():
    found = substitution("User prefers dark mode", "User prefers light mode")
    with pytest.raises(AttributeError):
        found.old_span = ()  # type: ignore[misc]


# --- canonical form, content words, values -----------------------------------------------------


@pytest.mark.parametrize(
    "a, b",
    [
        pytest.param("User prefers dark mode.", "user  prefers Dark mode", id="case-space-punctuation"),
        pytest.param('He said "yes"', "He said yes", id="quotes-dropped"),
        pytest.param("Italy’s capital", "Italy's capital", id="apostrophe"),
        pytest.param("ＡＢＣ", "abc", id="nfkc"),
    ],
)
def test_canonical_form_equal(a, b):
    assert canonical_form(a) == canonical_form(b)


def test_canonical_form_spelling():
    assert canonical_form("  User prefers Dark mode!! ") == "user prefers dark mode"
    assert canonical_form("I love 🍕.") == "i love 🍕"  # a sign is not punctuation
    assert canonical_form("1,000 people") != canonical_form("1000 people")


@pytest.mark.parametrize(
    "text, expected",
    [
        pytest.param("The user is in London", {"user", "london"}, id="en"),
        pytest.param("Alice really likes tea.", {"alice", "really", "likes", "tea"}, id="adverb-kept"),
        pytest.param("Le chat est dans la maison", {"chat", "maison"}, id="fr"),
        pytest.param("Ich habe einen Hund", {"hund"}, id="de"),
        pytest.param("У меня есть собака", {"собака"}, id="ru"),
        pytest.param("Alice's son is a doctor", {"alice's", "son", "doctor"}, id="homograph-noun-kept"),
        pytest.param('She said "hi" to me', {"said", "hi"}, id="quotes-and-pronouns-dropped"),
    ],
)
def test_content_words(text, expected):
    assert content_words(text) == frozenset(expected)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        pytest.param("Meeting moved to 3pm", "Meeting moved to 4pm", True, id="times"),
        pytest.param("Alice likes tea", "Alice really likes tea", False, id="no-values"),
        pytest.param("Budget is 1,000", "Budget is 2,000", True, id="numbers"),
        pytest.param("Flight on 2024-05-01", "Flight on 2024-06-01", True, id="dates"),
        pytest.param("Standup is on Monday", "Standup is on Tuesday", True, id="weekday-names"),
        pytest.param("Alice met Bob", "Bob met Alice", False, id="swapped-names-are-no-new-value"),
        pytest.param("Alice met Bob", "Alice met Carol", True, id="names"),
        pytest.param("Alice met Bob", "alice met bob", False, id="same-names-lowercase"),
        pytest.param('Password hint is "blue"', 'Password hint is "green"', True, id="quoted"),
        pytest.param("Budget is 1,000", "Budget is 1,000 dollars", False, id="one-side-adds-nothing-new"),
        pytest.param("Budget is 1,000", "Budget is 1,000 and 2,000", False, id="only-one-side-has-extra"),
        pytest.param("I think Alice called", "I think Alice phoned", False, id="pronoun-i-is-not-a-name"),
    ],
)
def test_values_differ(a, b, expected):
    assert values_differ(a, b) is expected
    assert values_differ(b, a) is expected
