"""The conflict resolver: marks, the cluster, the fold, acting, and the seed's invariants."""

from datetime import timedelta

import pytest

from memory_core import Identity, Memory
from memory_core.errors import InvalidInput
from memory_core.llm import LLMMalformed, LLMRefused, LLMUnavailable, Usage
from memory_core.resolver.fold import Judgement, PairFacts, Thresholds, fold
from memory_core.resolver.judge import JudgeAnswer, RuleJudge
from tests.conftest import store_snapshot, utc

OFFICE = "Ana's office is on the third floor of the Lisbon building"
MOVED = "Ana's office is on the fourth floor of the Lisbon building"


@pytest.fixture
def rmem(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        # The write path leaves these pairs alone (threshold 0.99): the resolver's floor is 0.60.
        memory.for_run(Identity(tenant="acme", user="ops", admin=True)).configure(
            policy="auto_reinforce", conflict_threshold=0.99
        )
        yield memory


@pytest.fixture
def ana(rmem):
    return rmem.for_run(Identity(tenant="acme", user="ana", agent="helper", session="s1"))


class Recording:
    """Wraps a judge: counts calls, keeps the requests, can act in the middle of a call."""

    def __init__(self, inner=None, during=None, errors=(), cost=0.0):
        self.inner, self.during, self.errors, self.cost = inner or RuleJudge(), during, list(errors), cost
        self.name = "recording"
        self.requests = []

    def judge(self, request):
        self.requests.append(request)
        if self.errors:
            raise self.errors.pop(0)
        if self.during:
            self.during(request)
        answer = self.inner.judge(request)
        return JudgeAnswer(answer.judgements, Usage(100, 20, self.cost) if self.cost else None)


def two_offices(ana, clock):
    ana.set("office", OFFICE)
    clock.advance(timedelta(days=1))
    ana.set("office-now", MOVED)
    clock.advance(timedelta(seconds=1))


def test_marks_owed_only_with_a_peer_at_the_floor(rmem, ana, clock):
    ana.set("pet", "Ana has a cat called Miso")
    report = rmem.resolve()
    assert report.marked == {"owed": 0, "none": 1}
    two_offices(ana, clock)
    assert rmem.resolve(Recording()).marked == {"owed": 1, "none": 1}  # the first office had no peer when marked


def test_an_update_retires_the_older_peer_with_a_record_that_restore_undoes(rmem, ana, clock):
    two_offices(ana, clock)
    report = rmem.resolve()
    assert report.actions["retire"] == 1
    assert ana.get("office") is None and ana.get("office-now").value == MOVED
    [record] = rmem.store.ledger.resolver_records()
    assert (record["action"], record["peer_key"], record["verdict"]) == ("retire", "office", "update")
    assert ana.get("office", as_of=utc(2024, 6, 1, 12)).value == OFFICE  # history still answers
    clock.advance(timedelta(minutes=1))
    assert ana.restore("office").verdict == "restored"
    assert ana.get("office").value == OFFICE
    assert rmem.resolve().judged == 0  # the Undo leaves the pair unowed: not judged again
    assert rmem.verify_audit().ok


def test_a_row_is_judged_once_per_version_and_a_new_statement_is_judged_afresh(rmem, ana, clock):
    two_offices(ana, clock)
    judge = Recording()
    rmem.resolve(judge)
    rmem.resolve(judge)
    assert len(judge.requests) == 1
    clock.advance(timedelta(days=1))
    ana.set("office-2", "Ana's office is on the fifth floor of the Lisbon building")  # a new statement: owed
    rmem.resolve(judge)
    assert len(judge.requests) == 2 and judge.requests[-1].key == "office-2"


def test_a_pinned_row_is_never_retired_flagged_cleared_or_a_peer(rmem, ana, clock):
    ana.set("office", OFFICE, pin=True)
    clock.advance(timedelta(days=1))
    ana.set("office-now", MOVED)
    clock.advance(timedelta(seconds=1))
    judge = Recording()
    report = rmem.resolve(judge)
    assert ana.get("office").value == OFFICE and ana.get("office").status.value == "active"
    assert all(p.key != "office" for r in judge.requests for p in r.peers) and report.actions["retire"] == 0


def test_a_pinned_judged_row_is_left_as_it_is(rmem, ana, clock):
    ana.set("office", OFFICE)
    clock.advance(timedelta(days=1))
    ana.set("office-now", MOVED, pin=True)
    clock.advance(timedelta(seconds=1))
    judge = Recording()
    rmem.resolve(judge)
    assert judge.requests == [] and ana.get("office").value == OFFICE  # no call paid, nothing changed


def test_manual_review_only_flags_and_a_compatible_verdict_clears(rmem, ana, clock):
    rmem.for_run(Identity(tenant="acme", user="ops", admin=True)).configure(policy="manual_review")
    two_offices(ana, clock)
    assert rmem.resolve().actions["flag"] == 1
    assert ana.get("office").status.value == "conflicted" and ana.get("office-now").status.value == "conflicted"
    row, peer = ana.get("office-now"), ana.get("office")
    from memory_core.services.resolver import act

    cleared = act(
        rmem.session,
        row.scope and ana.identity.namespace("user"),
        row.fact_id,
        row.key,
        row.content_sha256,
        peer.fact_id,
        peer.key,
        Judgement(peer.fact_id, "elaboration", 0.93, True, True),
        "manual_review",
        Thresholds(),
        "test",
    )
    assert cleared.kind == "clear"
    assert ana.get("office").status.value == "active" and ana.get("office").conflict_with == ()


def test_nothing_is_written_in_a_tenant_under_erasure(rmem, ana, clock):
    two_offices(ana, clock)
    rmem.store.ledger.set_erasure("acme", "running", clock.now())
    before = store_snapshot(rmem)["memory_versions"]
    report = rmem.resolve()
    assert report.judged == 0 and store_snapshot(rmem)["memory_versions"] == before
    rmem.store.ledger.set_erasure("acme", "done", clock.now())
    assert rmem.resolve().actions["retire"] == 1  # owed all along, judged once the erasure is over


def test_no_other_users_text_reaches_a_prompt(rmem, ana, clock):
    bob = rmem.for_run(Identity(tenant="acme", user="bob", agent="helper", session="s1"))
    bob.set("office", "Bob's office is on the third floor of the Lisbon building")
    bob.set("office-b", "Bob's office is on the second floor of the Lisbon building")
    two_offices(ana, clock)
    judge = Recording()
    rmem.resolve(judge)
    ana_requests = [r for r in judge.requests if "Ana" in r.text]
    assert ana_requests and all("Bob" not in p.text for r in ana_requests for p in r.peers)
    assert all("Ana" not in p.text for r in judge.requests if "Bob" in r.text for p in r.peers)


def test_a_user_write_racing_the_resolver_is_never_lost(rmem, ana, clock):
    two_offices(ana, clock)

    def user_writes(request):  # the user revises the peer while the judge is thinking
        clock.advance(timedelta(seconds=1))
        ana.set("office", "Ana's office is on the sixth floor of the Lisbon building")

    report = rmem.resolve(Recording(during=user_writes))
    assert report.actions["retire"] == 0
    assert ana.get("office").value == "Ana's office is on the sixth floor of the Lisbon building"
    assert all(r.changed_by != "worker:conflict-resolver" for r in ana.history("office"))


def test_failures_transient_outage_refusal_and_unusable_answers(rmem, ana, clock):
    for i in range(4):
        ana.set(f"office-{i}", f"Ana's office is on floor {i + 3} of the Lisbon building")
        clock.advance(timedelta(seconds=1))
    outage = Recording(errors=[LLMUnavailable("x (HTTP 503)", reached=True)] * 3)
    report = rmem.resolve(outage)
    assert report.stopped and report.left_owed == 3 and report.judged == 0
    assert rmem.store.ledger.mark_counts()["owed"] >= 3
    refused = Recording(errors=[LLMRefused("no", http_status=400), LLMMalformed("garbled")])
    report = rmem.resolve(refused)
    assert report.errored == 1 and rmem.store.ledger.mark_counts().get("errored") == 1  # the refused row
    # The unusable answer was paid for: one attempt, and the row stays owed until its third.
    [garbled] = rmem.store.ledger.owed_marks(10)
    assert garbled.attempts == 1
    for _ in range(2):
        rmem.resolve(Recording(errors=[LLMMalformed("garbled")]))
    assert rmem.store.ledger.mark_counts().get("errored") == 2 and rmem.store.ledger.owed_marks(10) == []


def test_the_daily_cost_share_is_checked_before_every_call(rmem, ana, clock):
    rmem.for_run(Identity(tenant="acme", user="ops", admin=True)).configure(
        daily_cost_cap_usd=0.04, resolver_cap_share=0.25
    )
    for i in range(4):
        ana.set(f"office-{i}", f"Ana's office is on floor {i + 3} of the Lisbon building")
        clock.advance(timedelta(seconds=1))
    judge = Recording(cost=0.01)  # a quarter of $0.04: one call
    report = rmem.resolve(judge)
    assert len(judge.requests) == 1 and report.capped >= 1


def test_thresholds_keep_their_order():
    with pytest.raises(InvalidInput):
        Thresholds(retire=0.9, flag=0.95, clear=0.8)
    with pytest.raises(InvalidInput):
        from memory_core.write.tenant_config import parse_tenant_config

        parse_tenant_config({"resolver_flag_confidence": 0.99})


@pytest.mark.parametrize(
    "verdict, confidence, same, policy, peer_first, flagged, expected",
    [
        ("update", 0.99, True, "newest_wins", True, False, "retire"),
        ("update", 0.99, True, "auto_reinforce", False, False, "flag"),  # the peer was not stated first
        ("update", 0.99, True, "manual_review", True, False, "flag"),
        ("update", 0.96, True, "newest_wins", True, False, "flag"),
        ("update", 0.94, True, "newest_wins", True, False, "nothing"),
        ("update", 0.99, False, "newest_wins", True, False, "nothing"),  # another entity: self-contradicting
        ("contradiction", 0.95, True, "newest_wins", True, False, "flag"),
        ("elaboration", 0.91, True, "newest_wins", True, True, "clear"),
        ("related", 0.91, True, "newest_wins", True, False, "nothing"),
        ("unrelated", 0.89, False, "newest_wins", True, True, "nothing"),
    ],
)
def test_the_fold_table(verdict, confidence, same, policy, peer_first, flagged, expected):
    t0, t1 = utc(2024, 1, 1), utc(2024, 2, 1)
    pair = PairFacts(t1 if peer_first else t0, t0 if peer_first else t1, None, None, flagged)
    assert fold(Judgement("p", verdict, confidence, same, same), pair, policy, Thresholds()).kind == expected


def test_two_rows_dated_the_same_day_go_to_review():
    day = utc(2024, 3, 1, 9)
    pair = PairFacts(utc(2024, 3, 2), utc(2024, 3, 1), day, day.replace(hour=18), False)
    assert fold(Judgement("p", "update", 0.99, True, True), pair, "newest_wins", Thresholds()).kind == "flag"


def test_the_llm_judge_prompt_and_answer_through_the_port(rmem, ana, clock):
    from memory_core.adapters.llm.judge import LLMJudge
    from memory_core.adapters.llm.openai_chat import OpenAIChat
    from tests.llm_server import ScriptedLLM, ok

    two_offices(ana, clock)
    with ScriptedLLM() as server:
        server.responder = lambda body: ok(
            {
                "judgements": [
                    {
                        "peer": "[p1]",
                        "reason": "moved floors",
                        "same_entity": True,
                        "same_attribute": True,
                        "verdict": "update",
                        "confidence": 0.99,
                    },
                    {
                        "peer": "p7",
                        "reason": "?",
                        "same_entity": True,
                        "same_attribute": True,
                        "verdict": "update",
                        "confidence": 0.99,
                    },
                    {"peer": "p1", "reason": "mistyped", "same_entity": "yes", "verdict": "update", "confidence": 2},
                ]
            },
            prompt_tokens=400,
            completion_tokens=60,
        )
        llm = OpenAIChat(server.base_url, "judge-model", sleep=lambda _: None, price_in_per_mtok=10.0)
        report = rmem.resolve(LLMJudge(llm))
        prompt = server.requests[0]["messages"][1]["content"]
    assert "NEW (key office-now" in prompt and "p1 (key office, cosine" in prompt and "same session" in prompt
    assert report.actions["retire"] == 1 and ana.get("office") is None  # the mistyped entry was dropped alone
    assert len(server.requests) == 1
    ns = ana.identity.namespace("user")
    assert rmem.store.ledger.spend(ns, clock.now().date(), "resolver") == pytest.approx(400 * 10.0 / 1e6)


def test_the_review_queue_and_a_reviewers_decisions(rmem, ana, clock):
    rmem.for_run(Identity(tenant="acme", user="ops", admin=True)).configure(policy="manual_review")
    two_offices(ana, clock)
    rmem.resolve()
    [first, second] = ana.review_queue()
    assert {first.key, second.key} == {"office", "office-now"}
    assert first.peers and first.reasons[0]["verdict"] == "update" and first.reasons[0]["reason"]
    result = ana.resolve_conflict("office-now", "office", "retire_peer")
    assert result.rows_written == 2 and ana.get("office") is None and ana.review_queue() == []
    assert ana.get("office-now").status.value == "active"
    clock.advance(timedelta(minutes=1))
    ana.restore("office")  # a reviewer's retirement is undone like any other, flag and all
    assert ana.get("office").value == OFFICE and ana.get("office").status.value == "conflicted"
    with pytest.raises(InvalidInput):
        ana.resolve_conflict("office-now", "office", "shrug")
    assert ana.resolve_conflict("office-now", "office", "clear").rows_written == 1
    assert ana.get("office").status.value == "active"
    from memory_core.errors import WrongState

    with pytest.raises(WrongState):
        ana.resolve_conflict("office-now", "office", "clear")  # not flagged against each other any more
