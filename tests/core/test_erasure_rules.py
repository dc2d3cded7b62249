"""The erasure's rules and decisions: every table is classified, the saga's pure steps, and what
the census looks for."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core import Identity
from memory_core.adapters.duckdb.erasure_rules import ERASURE_RULES, NONE
from memory_core.adapters.duckdb.inspection import TABLE_CLASSES
from memory_core.erasure import STEPS, Census, ErasureStatus, ErasureTarget, pick_needles
from memory_core.erasure.saga import abandon, advance, begin, census_outcome, next_step, recovery_due, start_run
from memory_core.errors import InvalidInput
from tests.conftest import T0


def test_every_table_has_a_role_and_an_erasure_rule(memory):
    memory.for_run(Identity(tenant="acme", user="ana")).set("city", "Lisbon")
    sql = "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'main'"
    tables = {r["t"] for r in memory.store.unchecked_sql(sql)}
    assert memory.store.inspection.unclassified_tables() == []
    assert tables <= set(TABLE_CLASSES) and tables <= set(ERASURE_RULES)
    for table, rule in ERASURE_RULES.items():  # a table said to hold no content says why
        assert rule.how != NONE or rule.reason, table


def test_a_new_table_in_no_class_is_named(memory):
    memory.store.unchecked_sql("CREATE TABLE scratch_copy (body VARCHAR)")
    assert memory.store.inspection.unclassified_tables() == ["scratch_copy"]


TARGET = ErasureTarget.of("acme", user="ana")


def test_the_saga_walks_the_steps_in_order_once_each():
    request = start_run(begin("r1", TARGET, "admin", T0), T0, "admin")
    seen = []
    while (step := next_step(request)) != "census":
        seen.append(step)
        request = advance(request, step, T0)
        assert advance(request, step, T0) == request  # a step done twice is checkpointed once
    assert tuple(seen) == STEPS[:-1] and request.version == 2 + len(seen)


def _census(**files: int) -> Census:
    return Census({"memory_versions": 0, "audit_log": 0}, {"memory_versions": 0}, files)


def test_a_zero_census_verifies_and_residue_reruns_its_step_then_fails_by_name():
    request = start_run(begin("r1", TARGET, "admin", T0), T0, "admin")
    for step in STEPS[:-1]:
        request = advance(request, step, T0)
    verified = census_outcome(request, _census(), T0, rerun=False)
    assert verified.status is ErasureStatus.VERIFIED and verified.residue_count == 0 and verified.verified_at == T0
    assert verified.residue["rows:memory_versions"] == 0  # zeros are kept
    again = census_outcome(request, _census(**{"lance/data/x.lance": 2}), T0, rerun=False)
    # The owning step runs again, and every step after it (a second delete needs its audit key
    # scrubbed and the file rewritten again).
    assert again.status is ErasureStatus.RUNNING and next_step(again) == "index" and again.steps == ("collect",)
    in_file = census_outcome(request, _census(**{"memory.duckdb": 1}), T0, rerun=False)
    assert next_step(in_file) == "compact" and in_file.steps == STEPS[: STEPS.index("compact")]
    failed = census_outcome(again, _census(**{"lance/data/x.lance": 2}), T0, rerun=True)
    assert failed.status is ErasureStatus.FAILED and "file:lance/data/x.lance: 2" in failed.error


def test_recovery_resumes_until_the_most_attempts_then_abandons():
    request = begin("r1", TARGET, "admin", T0)
    assert recovery_due(request, 3) == "resume"
    for _ in range(3):
        request = start_run(request, T0, "worker")
    assert recovery_due(request, 3) == "abandon"
    gone = abandon(request, T0 + timedelta(hours=1), "worker")
    assert gone.status is ErasureStatus.ABANDONED and not gone.holding and recovery_due(gone, 3) is None


@given(st.lists(st.text(min_size=0, max_size=30), max_size=20))
def test_needles_are_long_distinct_and_never_ids(texts):
    needles = pick_needles(texts)
    assert list(needles) == sorted(set(needles))
    assert all(len(n.encode()) >= 8 for n in needles)
    assert not any(n.isdigit() for n in needles)


def test_needles_come_from_json_leaves_but_not_from_who_acted():
    attrs = '{"subject": "Ana Pereira", "changed_by": "agent:scribe", "actor_chain": ["agent:scribe"]}'
    body = '{"value": ["gate code 7731", {"note": "fence behind the shed"}]}'
    needles = pick_needles([attrs, body, "fact_id:0123456789abcdef0123", "2024-06-01T09:00:00+00:00"])
    assert needles == ("Ana Pereira", "fence behind the shed", "gate code 7731")


@pytest.mark.parametrize(
    "named",
    [
        {"user": "ana", "agent": "helper"},
        {"namespaces": ["ana"]},
        {"namespaces": ["global/x"]},
        {"namespaces": ["user/"]},
        {"user": ""},  # names nobody: never read as "the whole tenant"
        {"namespaces": []},
    ],
)
def test_a_target_is_one_thing_and_well_formed(named):
    with pytest.raises(InvalidInput):
        ErasureTarget.of("acme", **named)
