"""Isolation through HTTP: the random-sequence property of ``tests/core/test_isolation_property.py``
with every run a remote tool holding its own API key, against a real service. Three tenants, two
users and two agents each, every read op; no answer may carry another namespace's tag. And a key
can never name who it is: identity fields in a body or a query are refused, whatever else is sent.
"""

from __future__ import annotations

import httpx
import pytest

from memory_core import Identity
from memory_core.access import IDENTITY_FIELDS
from memory_core.api.ops import TOOL_OPS
from memory_core.client import RemoteMemory
from memory_core.service import ThreadedServer
from tests.conftest import store_snapshot
from tests.core.test_isolation_property import EVERY_READ, RUNS, World, _property, run_sequence


class ServedWorld(World):
    """The shared home of the property, served; each example's runs are remote tools, one key each."""

    def __init__(self, root) -> None:
        super().__init__(root)
        self.per_home = 10**9  # one home, one server for the whole run
        self.server = ThreadedServer(self.memory).start()
        self.clients: list[RemoteMemory] = []

    def tools(self):
        n = next(self.examples)
        tools = []
        for t, u, a in RUNS:
            token, _ = self.memory.keys.create(tenant=f"x{n}t{t}", user=u, agent=a)
            client = RemoteMemory(self.server.url, token, session="s")
            self.clients.append(client)
            tools.append(client.tool())
        self.current = tools  # what clear and namespace_delete compare the other namespaces through
        return tools

    def close(self) -> None:
        for client in self.clients:
            client.close()
        self.server.stop()
        self.memory.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    world = ServedWorld(tmp_path_factory.mktemp("isolation-http"))
    yield world
    world.close()


def test_no_read_op_leaks_through_the_service(served):
    run_sequence(served, EVERY_READ, [(0, "user"), (5, "tenant")])
    assert all(served.reads.values()), served.reads  # every read op ran, through HTTP
    _property(12)(served)


@pytest.mark.slow
def test_no_leak_through_the_service_over_five_hundred_sequences(served):
    run_sequence(served, EVERY_READ, [(0, "user"), (5, "tenant")])
    _property(500)(served)
    assert next(served.examples) >= 500
    print("isolation over HTTP: reads by op:", served.reads)


@pytest.mark.parametrize("field", sorted(IDENTITY_FIELDS))
def test_a_body_naming_who_calls_is_refused_and_changes_nothing(served, field):
    token, _ = served.memory.keys.create(tenant="refusal", user="ana", agent="helper")
    before = store_snapshot(served.memory)
    for op in ("set", "get", "recall", "delete"):
        body = {"key": "k", "value": "v", "query": "v", field: "other"}
        body = {k: v for k, v in body.items() if k in TOOL_OPS[op].signature.parameters or k == field}
        answer = httpx.post(f"{served.server.url}/v1/{op}", json=body, headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "IDENTITY_IN_REQUEST", answer.text
        query = httpx.post(
            f"{served.server.url}/v1/{op}",
            params={field: "other"},
            json={k: v for k, v in body.items() if k != field},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert query.status_code == 400 and query.json()["error"]["code"] == "IDENTITY_IN_REQUEST"
    assert store_snapshot(served.memory) == before


def test_another_tenants_key_learns_nothing_about_a_key_it_does_not_hold(served):
    """Not yours and not there read the same: a tenant cannot probe another's keys or facts."""
    mine, _ = served.memory.keys.create(tenant="probe-a", user="ana")
    theirs, record = served.memory.keys.create(tenant="probe-b", user="bob")
    RemoteMemory(served.server.url, theirs).tool().set("secret", "b's")
    tool = RemoteMemory(served.server.url, mine).tool()
    assert tool.get("secret") is None and tool.list() == []
    assert tool.identity == Identity(tenant="probe-a", user="ana", session=None)
    forged = f"mck_{record.key_id}_{'A' * 43}"  # a real key id with a wrong secret
    unknown = f"mck_{'0' * 16}_{'A' * 43}"
    answers = [
        httpx.post(f"{served.server.url}/v1/get", json={"key": "secret"}, headers={"Authorization": f"Bearer {k}"})
        for k in (forged, unknown, "nonsense")
    ]
    assert {a.status_code for a in answers} == {401}
    assert len({a.text for a in answers}) == 1  # one answer for every refused key
