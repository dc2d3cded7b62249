"""The harvest bridge at all three distillation boundaries, and everything that must not fail a run."""

from datetime import timedelta

import pytest

from memory_core import Identity, Memory
from memory_core.extraction.distill import DistillationDriver
from memory_core.extraction.harvest import HarvestBridge
from memory_core.identity import Scope

ANA = Identity(tenant="acme", user="ana", agent="helper", session="run-1")


def transcript(n=30):
    cities = ["Lisbon", "Porto", "Madrid", "Oslo", "Rome"]
    out = []
    for i in range(n):
        out.append(
            {
                "role": "user",
                "name": "Ana",
                "content": f"Turn {i}. I moved to {cities[i % 5]} and it is "
                "lovely there, with long walks by the water.",
            }
        )
        out.append({"role": "assistant", "content": "Noted, that sounds wonderful."})
    return out


class NoModel:
    """An extractor that must never be called on the run's path."""

    name = "forbidden"

    def extract(self, turns, *, session_date):
        raise AssertionError("banking called a model")


@pytest.mark.parametrize(
    "boundary, driver_options, steps",
    [
        ("compaction", {"window_tokens": 120, "recap_every": 1000}, False),
        ("recap", {"window_tokens": 100_000, "recap_every": 6}, False),
        ("stateful", {"window_tokens": 100_000, "recap_every": 1000}, True),
    ],
)
def test_each_boundary_banks_its_span_without_a_model_and_the_consolidator_writes_facts(
    indexed_memory, boundary, driver_options, steps
):
    indexed_memory.extractor = NoModel()
    bridge = HarvestBridge(indexed_memory, ANA, harvest_to_memory=True)
    talk = transcript(12)
    if steps:
        talk = (
            talk[:8]
            + [{"role": "system", "content": "[step] booking done"}]
            + talk[8:16]
            + [{"role": "system", "content": "[step] next task"}]
        )
    report = DistillationDriver(bridge, session="run-1", **driver_options).replay(talk)
    assert report.boundaries[boundary] >= 1 and bridge.banked == sum(report.boundaries.values())
    assert bridge.events == []
    tool = indexed_memory.for_run(ANA)
    assert tool.extraction_queue_status()["pending"] == bridge.banked
    from memory_core.extraction.rules import RuleExtractor

    indexed_memory.extractor = RuleExtractor()
    counts = indexed_memory.run_extraction_queue(worker="consolidator", limit=100)
    assert counts["done"] == bridge.banked
    fact = tool.get("ana:lives_in")
    assert fact is not None and fact.provenance.compaction_generation is not None
    assert fact.provenance.origin == "worker:consolidation"


def test_a_run_that_did_not_opt_in_banks_nothing(indexed_memory):
    bridge = HarvestBridge(indexed_memory, ANA, harvest_to_memory=False)
    DistillationDriver(bridge, window_tokens=100).replay(transcript(10))
    assert bridge.banked == 0 and indexed_memory.for_run(ANA).extraction_queue_status()["pending"] == 0


def test_a_full_queue_drops_spans_with_an_event_and_the_run_completes(indexed_memory):
    bridge = HarvestBridge(indexed_memory, ANA, harvest_to_memory=True, capacity=2)
    report = DistillationDriver(bridge, window_tokens=120, recap_every=1000).replay(transcript(20))
    assert report.boundaries["compaction"] > 2
    assert bridge.banked == 2 and bridge.dropped == report.boundaries["compaction"] - 2
    assert {e["code"] for e in bridge.events} == {"HARVEST_QUEUE_FULL"}


def test_an_unreachable_store_never_fails_the_run(home, clock):
    memory = Memory.open(home, clock=clock)
    memory.close()  # the store went away under the run
    bridge = HarvestBridge(memory, ANA, harvest_to_memory=True)
    report = DistillationDriver(bridge, window_tokens=120).replay(transcript(10))
    assert report.boundaries["compaction"] >= 1 and bridge.banked == 0
    assert bridge.events and {e["code"] for e in bridge.events} == {"HARVEST_BANK_FAILED"}


@pytest.mark.parametrize(
    "memory_present, identity, reason",
    [
        (False, ANA, "no memory store"),
        (True, Identity(tenant="acme", agent="helper"), "no user id"),
        (True, Identity(tenant="acme", user="ana", memory_scopes=frozenset({Scope.AGENT})), "grant 'user'"),
    ],
)
def test_each_misconfiguration_is_one_error_event_and_the_run_completes(
    indexed_memory, memory_present, identity, reason
):
    seen = []
    bridge = HarvestBridge(
        indexed_memory if memory_present else None, identity, harvest_to_memory=True, on_event=seen.append
    )
    report = DistillationDriver(bridge, window_tokens=120).replay(transcript(15))
    assert report.boundaries["compaction"] > 1
    assert len(seen) == 1 and seen[0]["code"] == "HARVEST_MISCONFIGURED" and reason in seen[0]["message"]
    assert bridge.dropped == report.boundaries["compaction"]


def test_an_observer_that_raises_does_not_fail_the_run(indexed_memory):
    def explode(event):
        raise RuntimeError("observer down")

    bridge = HarvestBridge(None, ANA, harvest_to_memory=True, on_event=explode)
    DistillationDriver(bridge, window_tokens=120).replay(transcript(5))
    assert len(bridge.events) == 1


def test_consolidation_places_facts_about_typed_subjects(indexed_memory, clock):
    admin = indexed_memory.for_run(Identity(tenant="acme", user="ops", admin=True))
    admin.ontology_set("## service\n- `@memory_scope` tenant\n")
    tool = indexed_memory.for_run(ANA)
    tool.set(
        "checkout-api:kind",
        "checkout-api is a service",
        subject="checkout-api",
        subject_type="service",
        scope="tenant",
        relations=[["checkout-api", "is a", "service"]],
    )
    bridge = HarvestBridge(indexed_memory, ANA, harvest_to_memory=True)
    bridge.on_boundary(
        "compaction",
        [{"role": "user", "name": "checkout-api", "content": "I work at Acme Payments. I live in Frankfurt."}],
        generation=1,
    )
    clock.advance(timedelta(seconds=1))
    assert indexed_memory.run_extraction_queue(worker="c")["done"] == 1
    assert tool.get("checkout-api:works_at", scope="tenant").value == "checkout-api works at Acme Payments"
    assert tool.get("checkout-api:works_at", scope="user") is None
