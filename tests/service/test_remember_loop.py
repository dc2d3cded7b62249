"""The learning loop of the remember seed, end to end through the memory service (a real
``memcore serve`` process on 127.0.0.1): register a frame, get its context, capture two claims
and a decision trace, close the frame; a second frame's context returns the first frame's lessons
and precedent, each answer with a receipt that verifies offline against the home's public keys.
The seed's own routes are used where it names them: ``GET /v1/context``, ``POST /v1/captures``,
``POST /v1/retrieval-feedback``."""

from __future__ import annotations

import tomllib
from importlib import resources

import httpx

from memory_core import Memory
from memory_core.adapters.receipt_keys import verify_with
from memory_core.client import RemoteMemory
from memory_core.substrate.receipts import check_receipt
from tests.service.process import service


def _verifies(receipt: dict, keys: dict[str, str]) -> bool:
    check_receipt(receipt, lambda key_id, message, sig: verify_with(keys[key_id], message, sig))
    return True


def test_the_seeds_agent_loop_through_the_service(tmp_path):
    home = tmp_path / "home"
    with Memory.open(home) as memory:
        admin_key, _ = memory.keys.create(tenant="acme", user="root", admin=True)
        bob_key, _ = memory.keys.create(tenant="acme", user="ana", agent="bob")
    roster = tomllib.loads((resources.files("memory_core.substrate") / "rosters" / "seven.toml").read_text())
    roster["assignments"] = {"developer": ["agent:bob"]}

    with (
        service(home) as served,
        RemoteMemory(served.url, admin_key) as admin,
        RemoteMemory(served.url, bob_key) as bob,
    ):
        admin.tool().lens_roster_load(roster)
        agent = bob.tool()
        auth = {"Authorization": f"Bearer {bob_key}"}
        keys = httpx.get(f"{served.url}/v1/receipt-keys", headers=auth).json()["result"]

        # 1. register: a frame for the task
        first = agent.frame_open("fix", "checkout requests time out", tags=["checkout"], lenses=["developer"])
        # 2. load context (GET /v1/context, the seed's route): nothing learned yet
        got = httpx.get(f"{served.url}/v1/context", params={"lens": "developer", "frame": first.frame_id}, headers=auth)
        assert got.status_code == 200, got.text
        empty = got.json()["result"]
        assert empty["lessons"] == [] and _verifies(empty["receipt"], keys)
        # 3. work, then capture two claims (POST /v1/captures) and a decision trace
        captured = []
        claims = {
            "checkout-service": "The checkout service times out when the payment call exceeds 10 s",
            "payment-client": "Retrying the payment call once clears most checkout timeouts",
        }
        for entity, claim in claims.items():
            envelope = {
                "entity": entity,
                "claim": claim,
                "source": "session-1",
                "confidence": 0.9,
                "timestamp": "2024-06-01T09:00:00Z",
                "author": "bob",
                "lens_id": "developer",
                "frame_id": first.frame_id,
                "actor_chain": ["subsystem:create"],
            }
            answer = httpx.post(f"{served.url}/v1/captures", json=envelope, headers=auth)
            assert answer.status_code == 200, answer.text
            captured.append(answer.json()["result"])
        assert all(c["verdict"] == "created" and _verifies(c["receipt"], keys) for c in captured)
        decision = agent.decide(
            "act",
            "added one retry to the checkout payment call",
            lens_id="developer",
            frame_id=first.frame_id,
            inputs=[f"fact:{c['version']['fact_id']}" for c in captured],
            outcome="checkout timeouts fell from 4% to 0.3%",
        )
        # 4. end the session
        closed = agent.frame_close(first.frame_id, summary="retry added")
        assert len(closed.footprint) == 3

        # 5-6. the next session's context returns the lessons and the precedent, with a receipt
        second = agent.frame_open("fix", "checkout latency spikes", tags=["checkout"], lenses=["developer"])
        answer = httpx.post(f"{served.url}/v1/context", json={"frame_id": second.frame_id}, headers=auth)
        assert answer.status_code == 200, answer.text
        context = answer.json()["result"]
        lessons = {item["value"] for item in context["lessons"]}
        assert lessons == set(claims.values())
        assert [p["ref"] for p in context["precedent"]] == [f"decision:{decision.decision_id}"]
        assert context["precedent"][0]["value"]["outcome"] == "checkout timeouts fell from 4% to 0.3%"
        assert all(
            set(item["why"]) >= {"priority", "recency", "tag_match", "value_per_token"} for item in context["lessons"]
        )
        assert _verifies(context["receipt"], keys)
        disclosed = {d["ref"] for d in context["receipt"]["disclosed"]}
        assert disclosed == {i["ref"] for i in context["lessons"] + context["precedent"]}

        useful = context["lessons"][0]["ref"]
        feedback = httpx.post(
            f"{served.url}/v1/retrieval-feedback",
            json={"interaction_id": context["interaction_id"], "ref": useful, "verdict": "useful"},
            headers=auth,
        )
        assert feedback.status_code == 200 and feedback.json()["result"]["verdict"] == "useful"
        assert set(agent.frame_get(second.frame_id).surfaced) == disclosed
        refused = httpx.post(f"{served.url}/v1/captures", json={**envelope, "tenant": "other"}, headers=auth)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "IDENTITY_IN_REQUEST"

    with Memory.open(home) as memory:  # after the service: everything it acknowledged is there
        assert memory.verify_audit().ok
        rows = memory.store.unchecked_sql("SELECT kind, count(*) AS n FROM interactions GROUP BY kind ORDER BY kind")
        assert {r["kind"]: r["n"] for r in rows} == {"capture": 2, "context": 2, "feedback": 1}
