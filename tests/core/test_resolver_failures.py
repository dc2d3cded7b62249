"""The conflict resolver when the provider fails: a refused key stops the pass, a refused request
refuses its row, the same refusal row after row pauses the namespace across passes, a backlog too
old is dropped, and a flag the answer skipped is asked again a few times. The provider is a real
HTTP server (``tests/llm_server.py``) behind the real OpenAI-compatible judge."""

import re
from datetime import timedelta

import pytest

from memory_core import Identity, Memory
from memory_core.adapters.llm.judge import LLMJudge
from memory_core.adapters.llm.openai_chat import OpenAIChat
from memory_core.llm import LLMUnavailable
from memory_core.resolver.judge import JudgeAnswer
from tests.conftest import store_snapshot
from tests.llm_server import ScriptedLLM, ok, status

OFFICE = "Ana's office is on the third floor of the Lisbon building"
MOVED = "Ana's office is on the fourth floor of the Lisbon building"


def open_home(home, clock, conflict_threshold=0.99):
    memory = Memory.open(home, clock=clock, embedder="hashing")
    # The write path leaves these pairs to the resolver (threshold 0.99) unless a test asks otherwise.
    memory.for_run(Identity(tenant="acme", user="ops", admin=True)).configure(
        policy="auto_reinforce", conflict_threshold=conflict_threshold
    )
    return memory


def person(memory, user):
    return memory.for_run(Identity(tenant="acme", user=user, agent="helper", session="s1"))


def offices(writer, name, n, clock):
    """``n`` statements of one attribute: each after the first has the earlier ones as peers."""
    for i in range(n):
        writer.set(f"office-{i}", f"{name}'s office is on floor {i + 3} of the Lisbon building")
        clock.advance(timedelta(seconds=1))


def marks(memory, owner=None):
    """(owner, key, mark, attempts, errored, reason) of every resolver mark."""
    rows = store_snapshot(memory)["resolver_marks"]
    out = [(r[3], r[4], r[7], r[9], r[12], r[8]) for r in rows]
    return [m for m in out if owner is None or m[0] == owner]


def answer_every_peer(body):
    """An answer naming each peer of the prompt, changing nothing (related, low confidence)."""
    prompt = body["messages"][1]["content"]
    names = re.findall(r"^(p\d+) \(key", prompt, flags=re.M)
    judgements = [
        {
            "peer": n,
            "reason": "r",
            "same_entity": True,
            "same_attribute": False,
            "verdict": "related",
            "confidence": 0.5,
        }
        for n in names
    ]
    return ok({"judgements": judgements})


def llm_judge(server):
    return LLMJudge(OpenAIChat(server.base_url, "judge-model", api_key="sk-test", sleep=lambda _: None))


@pytest.mark.parametrize("code", [401, 403, 404])
def test_a_refused_key_or_model_stops_the_pass_with_every_row_owed(home, clock, code):
    with open_home(home, clock) as memory, ScriptedLLM() as server:
        offices(person(memory, "ana"), "Ana", 4, clock)
        server.script = [status(code)]
        report = memory.resolve(llm_judge(server))
        assert len(server.requests) == 1  # no further call after the refusal
        assert report.stopped and f"HTTP {code}" in report.stopped and report.errored == report.judged == 0
        owed = marks(memory, "ana")
        assert [m[2] for m in owed].count("owed") == 3 and all(m[3] == 0 and not m[4] for m in owed)
        assert report.notice and f"HTTP {code}" in report.notice
        # The same stop again: still stopped, nothing new to warn about.
        again = memory.resolve(llm_judge(server))
        assert again.stopped and again.notice is None and len(server.requests) == 2
        server.script = []
        server.responder = answer_every_peer
        back = memory.resolve(llm_judge(server))
        assert back.stopped is None and back.judged == 3 and "answered again" in back.notice


def test_another_refusal_errors_only_its_row_and_the_pass_goes_on(home, clock):
    with open_home(home, clock) as memory, ScriptedLLM() as server:
        offices(person(memory, "ana"), "Ana", 4, clock)
        server.responder = lambda body: status(400) if not server.requests[:-1] else answer_every_peer(body)
        report = memory.resolve(llm_judge(server))
        assert len(server.requests) == 3 and report.stopped is None
        assert (report.errored, report.judged) == (1, 2)
        [refused] = [m for m in marks(memory, "ana") if m[2] == "errored"]
        assert refused[4] and refused[3] == 0  # errored, and no attempt counted: a refused request is not billed


def test_the_same_refusal_three_rows_in_a_row_pauses_the_namespace_across_passes(home, clock):
    def refuse_ana(body):
        new = body["messages"][1]["content"].splitlines()[0]
        return status(422) if "Ana" in new else answer_every_peer(body)

    with ScriptedLLM() as server:
        server.responder = refuse_ana
        with open_home(home, clock) as memory:
            offices(person(memory, "ana"), "Ana", 5, clock)
            offices(person(memory, "bob"), "Bob", 3, clock)
            report = memory.resolve(llm_judge(server))
            ana = memory.for_run(Identity(tenant="acme", user="ana")).identity.namespace("user")
            assert report.marked["owed"] == 6 and report.paused == 1 and report.stopped is None
            asked = [r["messages"][1]["content"].splitlines()[0] for r in server.requests]
            assert sum("Ana" in a for a in asked) == 3  # the fourth Ana row was not asked
            assert [m[2] for m in marks(memory, "ana")].count("owed") == 4  # the refused ones too
            assert all(m[2] == "judged" for m in marks(memory, "bob") if m[2] != "none")  # bob went on
            assert report.judged == 2 and report.errored == 0
            assert memory.store.ledger.paused_namespaces(clock.now()) == [ana]

        # A later pass, in a fresh process, within the five minutes: the namespace is skipped.
        clock.advance(timedelta(minutes=4))
        server.responder = answer_every_peer
        calls = len(server.requests)
        with open_home(home, clock) as memory:
            report = memory.resolve(llm_judge(server))
            assert len(server.requests) == calls and report.judged == 0
            assert [m[2] for m in marks(memory, "ana")].count("owed") == 4

        clock.advance(timedelta(minutes=1, seconds=1))
        with open_home(home, clock) as memory:
            report = memory.resolve(llm_judge(server))
            assert report.judged == 4 and [m[2] for m in marks(memory, "ana")].count("owed") == 0


class Failing:
    """A judge whose provider is down (a transient failure): the row stays owed."""

    name = "down"

    def __init__(self):
        self.requests = []

    def judge(self, request):
        self.requests.append(request)
        raise LLMUnavailable("the provider is unavailable (no connection)", reached=False)


def test_a_row_owed_for_more_than_thirty_days_is_dropped_with_a_record_and_not_judged(home, clock):
    with open_home(home, clock) as memory:
        ana = person(memory, "ana")
        ana.set("office", OFFICE)
        clock.advance(timedelta(days=1))
        ana.set("office-now", MOVED)
        assert memory.resolve(Failing()).left_owed == 1  # marked owed now, and left owed
        clock.advance(timedelta(days=29))
        down = Failing()
        assert memory.resolve(down).dropped == 0 and len(down.requests) == 1  # 29 days: still owed
        clock.advance(timedelta(days=2))
        late = Failing()
        report = memory.resolve(late)
        assert report.dropped == 1 and late.requests == [] and report.left_owed == 0
        [row] = [m for m in marks(memory, "ana") if m[1] == "office-now"]
        assert row[2] == "dropped" and "30 days" in row[5] and "a peer at cosine" in row[5]
        assert ana.get("office").value == OFFICE  # nothing was acted on


class Silent:
    """A judge whose answers name no peer."""

    name = "silent"

    def __init__(self):
        self.requests = []

    def judge(self, request):
        self.requests.append(request)
        return JudgeAnswer(())


def test_a_flag_the_answer_left_unjudged_is_judged_again_three_times_then_errored(home, clock):
    with open_home(home, clock, conflict_threshold=0.6) as memory:
        ana = person(memory, "ana")
        ana.set("office", OFFICE)
        clock.advance(timedelta(days=1))
        assert ana.set("office-now", MOVED).verdict == "conflict"  # flagged when written: owed
        judge = Silent()
        for attempt in (1, 2, 3):
            report = memory.resolve(judge)
            [row] = [m for m in marks(memory, "ana") if m[1] == "office-now"]
            assert (row[2], row[3], report.judged) == ("owed", attempt, 0)
        report = memory.resolve(judge)
        [row] = [m for m in marks(memory, "ana") if m[1] == "office-now"]
        assert (row[2], row[4], report.errored) == ("errored", True, 1) and len(judge.requests) == 4
        assert memory.resolve(judge).errored == 0 and len(judge.requests) == 4  # not asked again


def test_a_flag_the_answer_judges_is_stamped_judged(home, clock):
    with open_home(home, clock, conflict_threshold=0.6) as memory:
        ana = person(memory, "ana")
        ana.set("office", OFFICE)
        clock.advance(timedelta(days=1))
        ana.set("office-now", MOVED)
        memory.resolve(Silent())  # one miss
        report = memory.resolve()  # the rule judge answers every peer
        [row] = [m for m in marks(memory, "ana") if m[1] == "office-now"]
        assert row[2] == "judged" and report.judged == 1
