"""A synthetic session stream for the reflect pipeline's tests, written through the Memory tool:
what ana knew before (three facts), then bob's session (captures through his lenses, a
transcript extracted, a decision trace and its outcome), eve's metric, and a worker's own trace.

With the tenant's conflict threshold at 0.7 (the hashing embedder's cosines run lower than a
model's), the pipeline is expected to write ``WRITTEN`` (key -> value of each live fact it
stated or reinforced) and to refuse the claims of ``REJECTED`` (reason code -> how many).
"""

from __future__ import annotations

from datetime import timedelta

from memory_core import FixedClock, Identity, Memory
from memory_core.identity import Namespace, Scope
from tests.conftest import T0
from tests.remember_setup import lensed

TENANT = "acme"
ANA = Identity(tenant=TENANT, user="ana", session="s0")
LONG = "The incident review found that " + ", and ".join(f"step {n} of the runbook was skipped" for n in range(30))

# The live facts the pipeline ends with, by their text (keys it mints carry a digest).
EXPECTED_TEXTS = {
    "Deploys to production never happen on Fridays.",  # supersedes release-day
    "Every deploy needs a green build first.",
    "The staging cluster runs in eu-west-1 and is rebuilt every night.",  # the capture, refining staging-region
    "Hotfixes skip the release queue.",
    "Rolled back release 4.2 because the schema migration locked the orders table.",
    "The rollback finished in four minutes and no orders were lost.",
}
RETIRED = {"release-day", "staging-region"}  # superseded behind the claims
REINFORCED = "on-call"  # said again by a claim
REJECTED = {"duplicate": 3, "unknown_memory_type": 1, "too_long": 1, "contradicted_by_newer": 1}


def clock() -> FixedClock:
    return FixedClock(T0)


def write_stream(memory: Memory) -> None:
    """The stream (the memory's clock must be a ``FixedClock``: each write a minute later)."""
    tick = memory.clock
    admin, bob, eve = lensed(memory)
    admin.configure(conflict_threshold=0.7)
    ana = memory.for_run(ANA)
    tick.advance(timedelta(minutes=1))
    ana.set("release-day", "Deploys to production happen on Fridays.", memory_type="lesson")
    ana.set("staging-region", "The staging cluster runs in eu-west-1.", memory_type="lesson")
    ana.set("on-call", "The on-call engineer approves every production deploy before noon.", memory_type="lesson")
    ana.set("vpn", "The VPN is required for staging access.", memory_type="lesson")
    tick.advance(timedelta(minutes=1))
    bob.capture(
        "deploys",
        "Deploys to production never happen on Fridays. Every deploy needs a green build first.",
        lens_id="developer",
    )
    bob.capture("staging", "The staging cluster runs in eu-west-1 and is rebuilt every night.", lens_id="developer")
    bob.capture("incident", LONG + ".", lens_id="developer")
    # Said a day before ana's fact: what it contradicts was stated later.
    bob.capture(
        "vpn", "The VPN is not required for staging access.", lens_id="developer", timestamp=T0 - timedelta(days=1)
    )
    eve.capture("checkout", "Checkout p95 latency is 420 ms.", lens_id="analyst", entity_type="metric")
    tick.advance(timedelta(minutes=1))
    ana.set_from_messages(
        [
            {"role": "user", "content": "I live in Lisbon. My sister is called Maya. She lives in Oslo."},
            {"role": "assistant", "content": "Noted, thanks!"},
        ],
        session="chat-1",
    )
    tick.advance(timedelta(minutes=1))
    trace = bob.decide(
        "act", "Rolled back release 4.2 because the schema migration locked the orders table.", lens_id="developer"
    )
    bob.decision_outcome(trace.decision_id, "The rollback finished in four minutes and no orders were lost.")
    # Restates what ana knew (reinforced), and says one thing new.
    bob.decide(
        "wait",
        "The on-call engineer approves every production deploy.\n- Hotfixes skip the release queue.",
        lens_id="developer",
    )
    memory.sweep_expired()  # nothing expires: the sweep records a worker's no_op trace, never an input
    tick.advance(timedelta(minutes=1))


def live_facts(memory: Memory, tenant: str = TENANT) -> dict[tuple[str, str, str], str]:
    """Every live fact of the tenant: (scope, owner, key) -> value text."""
    out = {}
    for scope, owner in memory.store.erasure.namespaces(tenant):
        ns = Namespace(tenant, Scope(scope), owner)
        for key, states in memory.session.versions.namespace_states(ns).items():
            for s in states:
                if s.live:
                    out[(scope, owner, key)] = str(s.value)
    return out


def final_state(memory: Memory, tenant: str = TENANT) -> dict:
    """What a run ends with, free of ids and times: live facts, claims' statuses, cursors."""
    state = memory.reflect_state(tenant)
    claims = sorted(
        (c["source_kind"], c["ordinal"], c["text"], c["status"], c["reason"], c["archived"], c["fact_key"] is not None)
        for c in state["claims"]
    )
    inputs = sorted(
        (i["source_kind"], i["source_key"] if i["source_kind"] != "decision" else "decision", i["claims"], i["status"])
        for i in state["inputs"]
    )  # a decision's key is its (drawn) id
    return {"facts": _fact_rows(memory, tenant), "claims": claims, "inputs": inputs, "cursors": state["cursors"]}


def _fact_rows(memory: Memory, tenant: str) -> dict[tuple[str, str, str], tuple[str, int, int]]:
    """Each live fact's value, how often it was said again, and how many rows its key holds: a
    claim written twice shows (a restatement is a row, and a reinforcement)."""
    out = {}
    for scope, owner in memory.store.erasure.namespaces(tenant):
        ns = Namespace(tenant, Scope(scope), owner)
        for key, states in memory.session.versions.namespace_states(ns).items():
            rows = len(memory.session.versions.history(ns, key))
            for s in states:
                if s.live:
                    out[(scope, owner, key)] = (str(s.value), s.reinforcement_count, rows)
    return out
