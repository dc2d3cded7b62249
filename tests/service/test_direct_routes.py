"""The service answers its own routes without FastAPI's per-request layers (service/direct.py):
every op of the tool is on that path, a route with a path parameter or an unknown method still
goes through FastAPI (typed answers either way), and a middleware added to the app sees every
request again."""

from __future__ import annotations

import httpx

from memory_core import FixedClock, Memory
from memory_core.adapters.embedders import HashingEmbedder
from memory_core.api.ops import TOOL_OPS
from memory_core.service import ThreadedServer, create_app
from tests.conftest import T0


def test_every_op_of_the_tool_and_every_fixed_route_is_answered_directly(tmp_path):
    with Memory.open(tmp_path / "home", clock=FixedClock(T0), embedder=HashingEmbedder()) as memory:
        app = create_app(memory)
        direct = set(app.direct_routes)
    assert {("POST", f"/v1/{name}") for name in TOOL_OPS} <= direct
    assert {
        ("GET", "/v1/whoami"),
        ("POST", "/v1/context"),
        ("GET", "/v1/context"),
        ("POST", "/v1/admin/flush"),
    } <= direct
    assert not any("{" in path for _, path in direct)  # /v1/keys/{key_id}/revoke goes through FastAPI
    assert ("GET", "/v1/set") not in direct


class Seen:
    """A plain ASGI middleware that notes the path of every request it passes on."""

    def __init__(self, app, paths: list[str]) -> None:
        self.app, self.paths = app, paths

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            self.paths.append(scope["path"])
        await self.app(scope, receive, send)


def test_a_middleware_added_to_the_app_sees_the_op_routes_too(tmp_path):
    paths: list[str] = []
    with Memory.open(tmp_path / "home", clock=FixedClock(T0), embedder=HashingEmbedder()) as memory:
        token, record = memory.keys.create(tenant="acme", user="ana")
        server = ThreadedServer(memory)
        server.app.add_middleware(Seen, paths=paths)
        with server:
            auth = {"Authorization": f"Bearer {token}"}
            made = httpx.post(f"{server.url}/v1/set", headers=auth, json={"key": "k", "value": "v"})
            got = httpx.post(f"{server.url}/v1/get", headers=auth, json={"key": "k"})
            revoked = httpx.post(f"{server.url}/v1/keys/{record.key_id}/revoke", headers=auth)
    assert made.status_code == 200 and got.json()["result"]["value_json"] == '"v"'
    assert revoked.status_code == 403 and revoked.json()["error"]["code"] == "ADMIN_REQUIRED"
    assert paths == ["/v1/set", "/v1/get", f"/v1/keys/{record.key_id}/revoke"]
