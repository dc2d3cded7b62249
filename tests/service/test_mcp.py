"""The Memory tool as an MCP server, through the ``mcp`` client library in real sessions: over
streamable HTTP at the service's ``/mcp`` (identity from the bearer key) and over stdio (a child
process serving ``run_stdio`` on a remote tool of the same service)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from memory_core import Identity, Memory
from memory_core.access import IDENTITY_FIELDS
from memory_core.api.ops import TOOL_OPS
from memory_core.errors import ServiceUnavailable
from memory_core.mcp_server import build_server
from memory_core.mcp_server.stdio import once
from memory_core.mcp_server.tools import tool_name
from memory_core.service import ThreadedServer, create_app

ROOT = Path(__file__).resolve().parents[2]
NAMED = {
    "memory_set",
    "memory_get",
    "memory_list",
    "memory_history",
    "memory_recall",
    "memory_search",
    "memory_delete",
    "doc_put",
    "doc_get",
    "graph_recall",
    "list_facts",
}

# The child that serves stdio: the CLI's contract (``run_stdio`` over a remote tool's source).
STDIO_SERVER = """
import os
from memory_core.client import RemoteMemory
from memory_core.mcp_server import run_stdio

with open(os.environ["PID_FILE"], "w") as pid:
    pid.write(str(os.getpid()))
with RemoteMemory(os.environ["MEMCORE_URL"], os.environ["MEMCORE_KEY"]) as remote:
    run_stdio(remote.tool)
"""


class Served:
    def __init__(self, memory: Memory, server: ThreadedServer, keys: dict[str, str]) -> None:
        self.memory, self.server, self.keys = memory, server, keys

    @property
    def mcp_url(self) -> str:
        return f"{self.server.url}/mcp"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with Memory.open(tmp_path_factory.mktemp("mcp") / "home", embedder="hashing") as memory:
        keys = {user: memory.keys.create(tenant="acme", user=user, agent="helper")[0] for user in ("ana", "bob", "cid")}
        with ThreadedServer(memory) as server:
            yield Served(memory, server, keys)


def session(served: Served, user: str, body: Callable[[Client], Awaitable[Any]], *, mode: str = "auto") -> Any:
    """Run ``body`` in one MCP session over streamable HTTP, as ``user``'s key."""

    async def main() -> Any:
        headers = {"Authorization": f"Bearer {served.keys[user]}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with Client(streamable_http_client(served.mcp_url, http_client=http), mode=mode) as client:
                return await body(client)

    return anyio.run(main)


async def call(client: Client, name: str, **arguments: Any) -> Any:
    """A tool's answer, parsed; a refusal fails the test with its text."""
    answer = await client.call_tool(name, arguments)
    assert not answer.is_error, answer.content[0].text
    return json.loads(answer.content[0].text)


def value(fact: dict[str, Any]) -> Any:
    """A fact's value, from its wire form (a ``FactVersion`` carries it as JSON text)."""
    return json.loads(fact["value_json"])


async def refused(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    answer = await client.call_tool(name, arguments)
    assert answer.is_error
    return json.loads(answer.content[0].text)["error"]


def test_tools_list_names_every_op_with_its_schema(served: Served) -> None:
    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in session(served, "ana", body)}
    assert NAMED <= tools.keys()
    assert tools.keys() == {tool_name(op) for op in TOOL_OPS}
    for tool in tools.values():
        assert tool.description
        assert tool.input_schema["type"] == "object"
        assert not IDENTITY_FIELDS & tool.input_schema["properties"].keys(), tool.name
    get = tools["memory_get"].input_schema
    assert get["required"] == ["key"]
    assert get["properties"]["scope"]["default"] == "user"
    assert get["additionalProperties"] is False
    assert tools["memory_get"].annotations.read_only_hint is True
    assert tools["memory_set"].annotations.read_only_hint is False


def test_the_ops_answer_their_wire_form(served: Served) -> None:
    async def body(client: Client) -> dict[str, Any]:
        first = await call(client, "memory_set", key="medication", value="ibuprofen", valid_at="2024-03-01T00:00:00Z")
        second = await call(client, "memory_set", key="medication", value="paracetamol")
        return {
            "first": first,
            "second": second,
            "get": await call(client, "memory_get", key="medication"),
            "was": await call(client, "memory_get", key="medication", as_of="2024-04-01T00:00:00Z"),
            "history": await call(client, "memory_history", key="medication"),
            "list": await call(client, "memory_list"),
            "recall": await call(client, "memory_recall", query="which medication", k=3),
            "search": await call(client, "memory_search", query="paracetamol", k=3),
            "doc": await call(client, "doc_put", doc_key="notes", body="# Notes\n\nAna cycles to work.", title="N"),
            "doc_get": await call(client, "doc_get", doc_key="notes"),
            "missing": await call(client, "memory_get", key="nothing-here"),
        }

    got = session(served, "ana", body)
    assert got["first"]["verdict"] == "created"
    assert got["second"]["verdict"] == "superseded"
    assert value(got["get"]) == "paracetamol"
    assert got["get"]["tenant"] == "acme" and got["get"]["owner_id"] == "ana"
    assert value(got["was"]) == "ibuprofen"
    history = got["history"]  # oldest first: the first statement, its closing row, the second one
    assert [value(v) for v in history] == ["ibuprofen", "ibuprofen", "paracetamol"]
    assert history[-1]["status"] == "active" and history[-1]["id"] == got["get"]["id"]
    assert [f["key"] for f in got["list"]] == ["medication"]
    assert got["recall"]["hits"][0]["key"] == "medication"
    assert any(hit["key"] == "medication" for hit in got["search"]["hits"])
    assert got["doc"]["verdict"] == "written"
    assert got["doc_get"]["title"] == "N"
    assert "".join(chunk["text"] for chunk in got["doc_get"]["chunks"]) == "# Notes\n\nAna cycles to work."
    assert got["missing"] is None


def test_a_refusal_is_an_error_result_with_its_typed_code(served: Served) -> None:
    async def body(client: Client) -> list[dict[str, Any]]:
        return [
            await refused(client, "memory_get", key=""),
            await refused(client, "memory_set", key="rule", value=1, scope="global"),
            await refused(client, "memory_get", key="medication", user="ana"),
            await refused(client, "memory_get", key="medication", colour="red"),
        ]

    empty, global_, identity, unknown = session(served, "bob", body)
    assert (empty["code"], empty["status"]) == ("EMPTY_KEY", 422)
    assert (global_["code"], global_["status"]) == ("SCOPE_FORBIDDEN", 403)
    assert (identity["code"], identity["status"]) == ("IDENTITY_IN_REQUEST", 400)
    assert unknown["code"] == "UNKNOWN_OPTION"
    assert all(error["message"] for error in (empty, global_, identity, unknown))


def test_each_key_is_its_own_identity(served: Served) -> None:
    async def write(client: Client) -> Any:
        return await call(client, "memory_set", key="city", value="Lisbon")

    async def read(client: Client) -> Any:
        return await call(client, "memory_get", key="city")

    session(served, "cid", write)
    assert session(served, "bob", read) is None  # bob's key reads bob's memory: never cid's
    assert value(session(served, "cid", read)) == "Lisbon"


def test_a_handshake_era_client_is_served_too(served: Served) -> None:
    async def body(client: Client) -> Any:
        assert client.protocol_version != "2026-07-28"
        tools = (await client.list_tools()).tools
        return len(tools), await call(client, "memory_set", key="legacy", value=True)

    count, written = session(served, "bob", body, mode="legacy")
    assert count == len(TOOL_OPS)
    assert written["verdict"] == "created"


@pytest.mark.parametrize("header", [None, "Bearer mck_0000000000000000_" + "A" * 43, "Basic abc"])
def test_a_request_without_a_valid_key_is_refused_401(served: Served, header: str | None) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    if header:
        headers["Authorization"] = header
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    response = httpx.post(served.mcp_url, json=ping, headers=headers, timeout=10)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHENTICATED"


def test_mcp_requests_are_counted_like_every_other(served: Served) -> None:
    async def body(client: Client) -> Any:
        return await client.list_tools()

    session(served, "ana", body)
    httpx.post(served.mcp_url, json={}, timeout=10)  # no key: refused, and counted as refused
    metrics = httpx.get(f"{served.server.url}/metrics", timeout=10).text
    assert 'memcore_requests_total{op="mcp",status="200"}' in metrics
    assert 'memcore_requests_total{op="mcp",status="401"}' in metrics


def test_stdio_serves_a_remote_tool(served: Served, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", STDIO_SERVER],
        env={"MEMCORE_URL": served.server.url, "MEMCORE_KEY": served.keys["ana"], "PID_FILE": str(tmp_path / "pid")},
        cwd=ROOT,
    )

    async def main() -> tuple[set[str], Any, Any, dict[str, Any]]:
        with (tmp_path / "stderr.txt").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                written = await call(client, "memory_set", key="pet", value={"kind": "cat", "name": "Miso"})
                read = await call(client, "memory_get", key="pet")
                error = await refused(client, "memory_get", key="")
                return names, written, read, error

    names, written, read, error = anyio.run(main)
    assert NAMED <= names
    assert written["verdict"] == "created"
    assert value(read) == {"kind": "cat", "name": "Miso"}
    assert error["code"] == "EMPTY_KEY"
    with pytest.raises(ProcessLookupError):  # the session's end stopped (and reaped) the child
        os.kill(int((tmp_path / "pid").read_text()), 0)
    # The child wrote through the service as ana's key: the home holds it for ana.
    assert served.memory.for_run(Identity(tenant="acme", user="ana", agent="helper")).get("pet").value == {
        "kind": "cat",
        "name": "Miso",
    }


def test_the_endpoint_lives_in_the_apps_lifespan(served: Served) -> None:
    from starlette.testclient import TestClient

    app = create_app(served.memory)
    headers = {"Authorization": f"Bearer {served.keys['ana']}", "Accept": "application/json, text/event-stream"}
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    outside = TestClient(app).post("/mcp", json=listing, headers=headers)
    assert outside.status_code == 503 and outside.json()["error"]["code"] == "SERVICE_UNAVAILABLE"
    for _ in range(2):  # each lifespan runs its own transport (a manager runs only once)
        with TestClient(app) as client:
            inside = client.post("/mcp", json=listing, headers=headers)
            assert inside.status_code == 200
            assert len(inside.json()["result"]["tools"]) == len(TOOL_OPS)


def test_a_failing_source_answers_its_error_and_is_tried_again(served: Served) -> None:
    made: list[int] = []

    def source() -> Any:  # the service is down for the first call, then up: as run_stdio sees it
        made.append(1)
        if len(made) == 1:
            raise ServiceUnavailable("the memory service could not be reached")
        return served.memory.for_run(Identity(tenant="acme", user="dee", agent="helper"))

    async def main() -> tuple[dict[str, Any], Any, Any]:
        async with Client(build_server(once(source))) as client:  # in-process: no transport
            down = await refused(client, "memory_get", key="k")
            return down, await call(client, "memory_set", key="k", value=1), await call(client, "memory_get", key="k")

    down, written, read = anyio.run(main)
    assert down["code"] == "SERVICE_UNAVAILABLE"
    assert written["verdict"] == "created" and value(read) == 1
    assert len(made) == 2  # made once it answered, then kept


def test_an_agent_works_under_a_frame_through_mcp(served: Served) -> None:
    admin = served.memory.for_run(Identity(tenant="acme", user="root", admin=True))
    admin.lens_define("mcp-dev", entity_types=["lesson", "decision"], capabilities=["read", "capture", "decide"])
    admin.lens_assign("mcp-dev", "agent:helper")

    async def body(client: Client) -> dict[str, Any]:
        frame = await call(client, "frame_open", intent="fix", goal="flaky deploys", tags=["deploy"])
        captured = await call(
            client,
            "memory_capture",
            entity="deploy",
            claim="deploys flake when the cache is cold",
            lens_id="mcp-dev",
            frame_id=frame["frame_id"],
        )
        context = await call(client, "memory_get_context", query="deploys", lenses=["mcp-dev"])
        closed = await refused(client, "memory_capture", entity="deploy", claim="x", lens_id="nope")
        return {"frame": frame, "captured": captured, "context": context, "refused": closed}

    got = session(served, "cid", body)
    assert got["captured"]["verdict"] == "created" and got["captured"]["receipt"]["signature"]
    assert [i["value"] for i in got["context"]["lessons"]] == ["deploys flake when the cache is cold"]
    assert got["refused"]["code"] == "LENS_NOT_FOUND"
