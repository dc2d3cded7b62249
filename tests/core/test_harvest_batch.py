"""The consolidator reads a session's banked spans as one batch: a pronoun in a later span finds
the person an earlier span named, whether the spans are consolidated together or one run apart."""

from datetime import timedelta

from memory_core import Identity
from memory_core.extraction.distill import DistillationDriver
from memory_core.extraction.harvest import HarvestBridge
from memory_core.extraction.rules import RuleExtractor

ANA = Identity(tenant="acme", user="ana", agent="helper", session="run-1")
NAMED = {"role": "user", "name": "Ana", "content": "My sister is called Maya."}
POINTED = {"role": "user", "name": "Ana", "content": "She lives in Oslo now."}


def bank(memory, identity, message, generation, session=None):
    bridge = HarvestBridge(memory, identity, harvest_to_memory=True)
    assert bridge.on_boundary("compaction", [message], generation=generation, session=session)


def results(memory, identity=ANA):
    return [row.result for row in memory.for_run(identity).extraction_status() if row.result]


def test_spans_banked_at_two_boundaries_and_consolidated_together_write_both_facts(indexed_memory):
    indexed_memory.extractor = RuleExtractor()
    bridge = HarvestBridge(indexed_memory, ANA, harvest_to_memory=True)
    step = {"role": "system", "content": "[step] next task"}
    report = DistillationDriver(bridge, window_tokens=100_000, recap_every=1000).replay([NAMED, step, POINTED, step])
    assert report.boundaries["stateful"] == 2 and bridge.banked == 2
    counts = indexed_memory.run_extraction_queue(worker="consolidator", limit=10)
    assert (counts["claimed"], counts["done"]) == (2, 2)
    tool = indexed_memory.for_run(ANA)
    assert tool.get("ana:sister_name").value == "Ana's sister is named Maya"
    lives = tool.get("maya:lives_in")
    assert lives is not None and lives.value == "Maya lives in Oslo"
    assert lives.provenance.compaction_generation == 2  # the span that said it, not the batch's first
    assert tool.get("ana:sister_name").provenance.compaction_generation == 1
    [result, same] = results(indexed_memory)
    assert result == same and [s["generation"] for s in result["spans"]] == [1, 2]


def test_a_span_banked_after_its_predecessor_was_consolidated_still_reads_it(indexed_memory, clock):
    indexed_memory.extractor = RuleExtractor()
    tool = indexed_memory.for_run(ANA)
    bank(indexed_memory, ANA, NAMED, 1)
    assert indexed_memory.run_extraction_queue(worker="c")["done"] == 1
    assert tool.get("ana:sister_name") is not None and tool.get("maya:lives_in") is None
    clock.advance(timedelta(minutes=5))
    bank(indexed_memory, ANA, POINTED, 2)
    assert indexed_memory.run_extraction_queue(worker="c")["done"] == 1
    assert tool.get("maya:lives_in").value == "Maya lives in Oslo"
    # The earlier span was context the second time: its fact was not extracted or written again.
    assert len(tool.history("ana:sister_name")) == 1
    later = results(indexed_memory)[-1]
    assert later["written"] == ["maya:lives_in"] and later["context_turns"] == 1
    assert later["extracted"] == 1 and not any(later["dropped"].values())


def test_spans_of_another_session_or_another_user_are_not_context(indexed_memory, clock):
    indexed_memory.extractor = RuleExtractor()
    bea = Identity(tenant="acme", user="bea", agent="helper", session="run-1")
    bank(indexed_memory, ANA, NAMED, 1, session="run-1")
    bank(indexed_memory, ANA, {**NAMED, "content": "My sister is called Ines."}, 1, session="run-2")
    assert indexed_memory.run_extraction_queue(worker="c")["done"] == 2
    clock.advance(timedelta(minutes=5))
    bank(indexed_memory, ANA, POINTED, 2, session="run-3")  # another session of the same user
    bank(indexed_memory, bea, {**POINTED, "name": "Bea"}, 2, session="run-1")  # another user, same session name
    assert indexed_memory.run_extraction_queue(worker="c")["done"] == 2
    for identity in (ANA, bea):
        tool = indexed_memory.for_run(identity)
        assert tool.get("maya:lives_in") is None and tool.get("ines:lives_in") is None
    assert [r["context_turns"] for r in results(indexed_memory, bea)] == [0]
    # and the session that did name someone still resolves its own later span
    bank(indexed_memory, ANA, POINTED, 2, session="run-2")
    assert indexed_memory.run_extraction_queue(worker="c")["done"] == 1
    assert indexed_memory.for_run(ANA).get("ines:lives_in").value == "Ines lives in Oslo"
    assert indexed_memory.for_run(ANA).get("maya:lives_in") is None
