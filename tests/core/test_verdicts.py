"""Peer verdicts: the pure decision, the seed's own pairs, threshold precedence, and what each
verdict does to the store."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_core import Identity, Memory, Status
from memory_core.errors import PinnedConflict
from memory_core.write.tenant_config import Policy, TenantConfig, TypeConfig, resolve_threshold
from memory_core.write.verdicts import Candidate, Peer, decide
from tests.conftest import T0, store_snapshot

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service

LATER = T0 + timedelta(days=1)


def peer(text, cosine=0.9, key="other", valid_at=T0, **flags):
    return Peer(fact_id=f"f-{key}", key=key, text=text, cosine=cosine, valid_at=valid_at, **flags)


def verdict(text, peers, policy=Policy.NEWEST_WINS, valid_at=LATER, key_identified=False):
    return decide(
        Candidate(text, valid_at, key_identified), peers, threshold=0.8, duplicate_threshold=0.95, policy=policy
    )


def test_no_close_peer_is_no_peers():
    assert verdict("User prefers dark mode", [peer("User prefers light mode", cosine=0.5)]).kind == "no_peers"
    assert verdict("User prefers dark mode", []).kind == "no_peers"


def test_a_peer_in_the_same_canonical_form_is_a_merge():
    v = verdict("user prefers Dark mode", [peer("User prefers dark mode.", cosine=0.99)])
    assert v.kind == "merge" and v.peers[0].key == "other" and not v.inserts


def test_a_close_pinned_peer_rejects():
    assert verdict("User prefers light mode", [peer("User prefers dark mode", pinned=True)]).kind == "rejected"


@pytest.mark.parametrize(
    "old, new",
    [
        ("prefers dark mode", "prefers light mode"),
        ("User prefers dark mode", "User prefers light mode"),
        ("drives a red sports car", "drives a blue sports car"),
        ("I live in Москва", "I live in Berlin"),
        ("I work at Acme in London", "I work at Globex in London"),
    ],
    ids=["dark-light", "dark-light-subject", "sports-car", "moscow-berlin", "acme-globex"],
)
def test_the_seeds_substitutions_refine_under_newest_wins(old, new):
    v = verdict(new, [peer(old)])
    assert v.kind == "refines" and v.peers[0].text == old


@pytest.mark.parametrize(
    "old, new",
    [
        ("lives in London", "works in London"),
        ("Alice lives in London", "Alice works in London"),
        ("The capital of Soviet Union is Moscow", "The capital of Italy is Rome"),
    ],
    ids=["lives-works", "lives-works-subject", "capitals"],
)
def test_the_seeds_non_pairs_never_refine(old, new):
    assert verdict(new, [peer(old)]).kind == "conflict"


def test_a_substituted_peer_stated_later_is_a_conflict_not_a_retirement():
    v = verdict("User prefers light mode", [peer("User prefers dark mode", valid_at=LATER + timedelta(days=1))])
    assert v.kind == "conflict"


def test_a_locked_substituted_peer_is_never_retired():
    assert verdict("User prefers light mode", [peer("User prefers dark mode", locked=True)]).kind == "conflict"


@pytest.mark.parametrize("policy", [Policy.AUTO_REINFORCE, Policy.MANUAL_REVIEW])
def test_only_newest_wins_refines(policy):
    assert verdict("User prefers light mode", [peer("User prefers dark mode")], policy=policy).kind == "conflict"


def test_append_only_skips_the_check():
    assert (
        verdict("User prefers light mode", [peer("User prefers dark mode")], policy=Policy.APPEND_ONLY).kind
        == "no_peers"
    )


def test_same_content_words_at_the_duplicate_threshold_is_a_duplicate():
    v = verdict("dark mode is what the user prefers", [peer("the user prefers dark mode", cosine=0.97)])
    assert v.kind == "duplicate"


def test_values_each_side_lacks_are_not_a_duplicate():
    v = verdict("Meeting with Bob on Friday", [peer("Friday meeting with Bob", cosine=0.97)])
    assert v.kind == "duplicate"
    v = verdict("Flight LH 400 departs at 9:30", [peer("Flight LH 401 departs at 9:30", cosine=0.97)])
    assert v.kind != "duplicate"


def test_a_decision_is_identified_by_its_key():
    v = verdict(
        "Use Postgres for billing", [peer("Use Postgres for billing", cosine=0.99, pinned=True)], key_identified=True
    )
    assert v.kind == "conflict"


def test_threshold_precedence_type_then_tenant_then_embedder_then_default():
    assert (
        resolve_threshold(TypeConfig("t", dedup_threshold=0.9), TenantConfig(conflict_threshold=0.7), 0.6).source
        == "type"
    )
    assert resolve_threshold(TypeConfig("t"), TenantConfig(conflict_threshold=0.7), 0.6).value == 0.7
    assert resolve_threshold(TypeConfig("t"), TenantConfig(), 0.6).source == "embedder"
    assert resolve_threshold(TypeConfig("t"), TenantConfig(), None).source == "default"


# -- through the tool ------------------------------------------------------------------------


@pytest.fixture
def verdicts_memory(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        yield memory


@pytest.fixture
def tool(verdicts_memory):
    t = verdicts_memory.for_run(Identity(tenant="acme", user="ana", agent="helper", admin=True))
    t.configure(conflict_threshold=0.45)  # the hashing test embedder scores word overlap
    return t


def test_refines_retires_the_peer_and_restore_undoes_it(tool, clock):
    tool.set("k1", "User prefers dark mode")
    clock.advance(timedelta(days=1))
    result = tool.set("k2", "User prefers light mode")
    assert result.verdict == "refines" and result.details["peers"][0]["key"] == "k1"
    assert tool.get("k1") is None
    retired = tool.history("k1")[-1]
    assert retired.status is Status.SUPERSEDED and retired.superseded_by == result.version.id
    assert tool.get("k1", as_of=clock.now() - timedelta(hours=1)).value == "User prefers dark mode"
    assert tool.restore("k1").verdict == "restored"
    assert tool.get("k1").value == "User prefers dark mode"


def test_refines_never_extends_a_peer_past_its_own_end(tool, clock):
    tool.set("k1", "User prefers dark mode", invalid_at=clock.now() + timedelta(days=10))
    result = tool.set("k2", "User prefers light mode", valid_at=clock.now() + timedelta(days=30))
    assert result.verdict == "refines"
    retired = tool.history("k1")[-1]
    assert retired.invalid_at == clock.now() + timedelta(days=10)


def test_conflict_flags_both_sides_and_both_stay_served(tool, clock):
    tool.set("k3", "Alice lives in London")
    result = tool.set("k4", "Alice works in London")
    assert result.verdict == "conflict"
    new, old = tool.get("k4"), tool.get("k3")
    assert new.status is Status.CONFLICTED and old.status is Status.CONFLICTED
    assert new.conflict_with == (old.fact_id,) and old.conflict_with == (new.fact_id,)


def test_merge_writes_no_new_row_and_reinforces_the_peer(tool):
    tool.set("k5", "User prefers dark mode")
    result = tool.set("k6", "user prefers dark mode.")
    assert result.verdict == "merged" and result.details["merged_into"] == "k5"
    assert tool.get("k6") is None and tool.get("k5").reinforcement_count == 1


def test_a_close_pinned_peer_refuses_the_write_and_names_no_row(verdicts_memory, tool, home):
    tool.set("k5", "User prefers dark mode", pin=True)
    memory = verdicts_memory
    before = store_snapshot(memory)
    with pytest.raises(PinnedConflict) as refused:
        tool.set("k7", "User prefers light mode")
    assert "k5" not in refused.value.message and "dark" not in refused.value.message
    assert store_snapshot(memory) == before


def test_peers_are_compared_by_their_values_not_their_keys(tool, clock):
    tool.set("ui_theme", "User prefers dark mode")
    clock.advance(timedelta(days=1))
    result = tool.set("display_settings", "User prefers light mode")
    assert result.verdict == "refines" and result.details["peers"][0]["key"] == "ui_theme"


def test_peers_load_from_the_store_in_a_new_process(verdicts_memory, tool, home, clock):
    tool.set("k1", "User prefers dark mode")
    verdicts_memory.close()
    with Memory.open(home, clock=clock, embedder="hashing") as memory:  # no peer vectors in memory yet
        again = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        clock.advance(timedelta(days=1))
        assert again.set("k2", "User prefers light mode").verdict == "refines"


def test_peers_never_cross_scopes(tool):
    tool.set("k5", "User prefers dark mode", scope="agent")
    assert tool.set("k6", "User prefers light mode", scope="user").verdict == "created"
