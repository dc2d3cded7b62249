"""Notes a run session writes one after another are a conversation: each note is found by the
words of the two before it, without the caller passing them (write/conversation.py)."""

import pytest

from memory_core import Identity, Memory

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service

TURNS = [
    ("D1:1", "Ana", "Did you go anywhere nice this weekend?"),
    ("D1:2", "Ben", "We drove up to the lake with the kids."),
    ("D1:3", "Ana", "Sounds lovely, did they swim?"),
    ("D1:4", "Ben", "All afternoon, until sunset."),
]


@pytest.fixture
def memory(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as m:
        yield m


def tool_of(memory, session="chat-1", **kw):
    return memory.for_run(Identity(tenant="acme", user="ana", agent="helper", session=session, **kw))


def say(tool, turns=TURNS):
    for key, speaker, text in turns:
        tool.set(key, text, kind="note", subject=speaker)


def test_a_note_carries_the_two_notes_before_it_in_its_session(memory):
    tool = tool_of(memory)
    say(tool)
    contexts = {v.key: v.index_context for v in tool.list()}
    assert contexts == {
        "D1:1": None,
        "D1:2": "Did you go anywhere nice this weekend?",
        "D1:3": "Did you go anywhere nice this weekend? We drove up to the lake with the kids.",
        "D1:4": "We drove up to the lake with the kids. Sounds lovely, did they swim?",
    }
    assert tool.get("D1:4").value == "All afternoon, until sunset."  # the value is what was said


def test_a_turn_is_found_by_the_question_before_it(memory):
    tool = tool_of(memory)
    say(tool)
    hits = tool.recall("weekend", recipe="bm25_only").hits
    # the question, and the two turns after it: the answer is found by the question's words
    assert sorted(h.key for h in hits if "bm25" in h.legs) == ["D1:1", "D1:2", "D1:3"]


def test_sessions_facts_and_given_contexts_stay_apart(memory):
    first, second = tool_of(memory, "chat-1"), tool_of(memory, "chat-2")
    first.set("a", "we talked about the lake", kind="note")
    second.set("b", "a different chat", kind="note")
    first.set("fact", "Ben likes lakes")
    first.set("c", "what the caller said", kind="note", context="words of my own")
    first.set("d", "the next turn", kind="note")
    no_session = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
    no_session.set("e", "a note outside any session", kind="note")
    contexts = {v.key: v.index_context for v in first.list()}
    assert contexts["b"] is None  # another session's conversation
    assert contexts["fact"] is None  # facts are not turns
    assert contexts["c"] == "words of my own"
    assert contexts["d"] == "we talked about the lake what the caller said"
    assert contexts["e"] is None


def test_a_restatement_keeps_its_context_and_does_not_move_the_tail(memory, clock):
    tool = tool_of(memory)
    say(tool, TURNS[:2])
    tool.set("D1:1", TURNS[0][2], kind="note", subject="Ana")  # said again: the same fact
    tool.set("D1:3", "next", kind="note")
    contexts = {v.key: v.index_context for v in tool.list()}
    assert contexts["D1:1"] is None
    assert contexts["D1:3"] == "Did you go anywhere nice this weekend? We drove up to the lake with the kids."


def test_high_notes_never_lend_their_words(memory):
    tool = tool_of(memory)
    tool.set("a", "my door code is 4821", kind="note", sensitivity="high")
    tool.set("b", "thanks, noted", kind="note")
    assert tool.get("b").index_context is None


def test_the_session_is_picked_up_after_a_restart(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        say(tool_of(memory), TURNS[:3])
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = tool_of(memory)
        tool.set("D1:4", TURNS[3][2], kind="note")
        assert tool.get("D1:4").index_context == TURNS[1][2] + " " + TURNS[2][2]


def test_redacting_a_turn_takes_its_words_out_of_the_turns_that_quoted_it(memory):
    tool = tool_of(memory)
    say(tool)
    secret = TURNS[1][2]
    tool.delete("D1:2")
    first = tool.history("D1:2")[0]
    result = tool.redact("D1:2", first.id)
    assert result.details["contexts_requoted"] == 2
    contexts = {v.key: v.index_context for v in tool.list()}
    assert contexts["D1:3"] == "Did you go anywhere nice this weekend?"
    assert contexts["D1:4"] == "Sounds lovely, did they swim?"
    for version in tool.history("D1:3") + tool.history("D1:4"):
        assert secret not in (version.index_context or "")
    assert not [h for h in tool.recall("drove lake kids", recipe="bm25_only").hits if "bm25" in h.legs]
    tool.set("D1:5", "and then home", kind="note")  # the tail is read again, without the redacted turn
    assert secret not in (tool.get("D1:5").index_context or "")


def test_a_dry_run_neither_writes_nor_moves_the_tail(memory):
    tool = tool_of(memory)
    say(tool, TURNS[:2])
    result = tool.set("D1:3", "maybe", kind="note", dry_run=True)
    assert result.details.get("dry_run") and tool.get("D1:3") is None
    tool.set("D1:4", "for real", kind="note")
    assert tool.get("D1:4").index_context == TURNS[0][2] + " " + TURNS[1][2]


def test_a_redaction_leaves_other_words_and_later_turns_alone(memory):
    tool = tool_of(memory)
    for key, text in [("t1", "ok"), ("t2", "book it"), ("t3", "okay then"), ("t4", "ok"), ("t5", "done")]:
        tool.set(key, text, kind="note")
    tool.delete("t1")
    tool.redact("t1", tool.history("t1")[0].id)
    contexts = {v.key: v.index_context for v in tool.list()}
    assert contexts["t2"] is None  # it quoted "ok" alone
    assert contexts["t3"] == "book it"  # "book" keeps its letters
    assert contexts["t4"] == "book it okay then"  # "okay" is another word
    # t5 quoted t4's "ok", not t1's: words the same as the redacted note's go too (the safe side)
    assert contexts["t5"] == "okay then"


def test_a_redaction_reaches_a_note_that_quoted_past_a_high_one(memory):
    tool = tool_of(memory)
    tool.set("a", "my secret plan zebra", kind="note")
    tool.set("b", "a code word", kind="note", sensitivity="high")  # lends no words, so d quotes a
    tool.set("c", "ok then", kind="note")
    tool.set("d", "fine", kind="note")
    assert tool.get("d").index_context == "my secret plan zebra ok then"
    tool.delete("a")
    tool.redact("a", tool.history("a")[0].id)
    assert tool.get("d").index_context == "ok then"
    assert not [h for h in tool.recall("zebra", recipe="bm25_only").hits if "bm25" in h.legs]


def test_a_note_deleted_or_made_high_since_lends_no_words(memory):
    tool = tool_of(memory)
    tool.set("a", "my door code zebra", kind="note")
    tool.set("b", "ok", kind="note")
    tool.set("a", "my door code zebra", kind="note", sensitivity="high")  # restated high
    tool.set("c", "and then", kind="note")
    assert tool.get("c").index_context == "ok"
    tool.set("x", "words about a yak", kind="note")
    tool.delete("x")
    tool.set("d", "later", kind="note")
    assert tool.get("d").index_context == "ok and then"


def test_speakers_are_those_of_served_notes(memory):
    tool = tool_of(memory)
    tool.set("a", "hello", kind="note", subject="Ana")
    tool.set("b", "a private matter", kind="note", subject="DrHidden", sensitivity="high")
    reader = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
    assert reader.recall("hello").participants == ("Ana",)
    tool.set("c", "hi", kind="note", subject="Ben")
    tool.set("c", "hi", kind="note", subject="Ben", sensitivity="high")  # restated high: no longer served
    assert reader.recall("hello").participants == ("Ana",)
