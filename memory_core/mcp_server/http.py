"""The MCP server over streamable HTTP, for the memory service to route at ``/mcp``.

Every request is authenticated before the MCP transport reads it: ``bind_request`` checks its
API key and answers the tool source of the key's identity (or raises the typed refusal, answered
as the service answers every refusal). The source travels with the request to the tool handlers,
so a call runs as the key's identity and can name no other.

Stateless, JSON answers: the tools never ask the client anything back, so no request needs a
session or a stream, and any worker can answer any request. The transport's task group lives in
``running()``, which the app's lifespan enters; outside it the endpoint answers 503.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable

from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..errors import MemcoreError, ServiceUnavailable
from .server import SOURCE_SCOPE_KEY, Runner, ToolSource, build_server

# The request's tool source, or raise its refusal. Awaited: checking a key may read the store.
RequestBinder = Callable[[Request], Awaitable[ToolSource]]


class McpEndpoint:
    """The ASGI app to route at ``/mcp``."""

    def __init__(
        self,
        server: Server[Any],
        bind_request: RequestBinder,
        refuse: Callable[[MemcoreError], Response],
        max_body_bytes: int,
    ) -> None:
        self.server = server
        self.bind_request = bind_request
        self.refuse = refuse
        self.max_body_bytes = max_body_bytes
        self._manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Serve while inside: enter it in the app's lifespan. A manager runs only once, so each
        lifespan (a test client may enter the same app's twice) gets its own."""
        manager = StreamableHTTPSessionManager(
            app=self.server,
            json_response=True,
            stateless=True,
            max_request_body_size=self.max_body_bytes,
            # No Host/Origin allow-list: the service may listen on any address, and a request that
            # a browser was tricked into sending carries no API key, so it is refused anyway.
            security_settings=None,
        )
        async with manager.run():
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = self._manager
        try:
            if manager is None:
                raise ServiceUnavailable("the MCP endpoint is not running (the app's lifespan has not started)")
            source = await self.bind_request(Request(scope))  # headers only: the body is the transport's to read
        except MemcoreError as exc:
            await self.refuse(exc)(scope, receive, send)
            return
        scope[SOURCE_SCOPE_KEY] = source
        await manager.handle_request(scope, receive, send)


def mcp_endpoint(
    bind_request: RequestBinder,
    *,
    run: Runner[Any],
    refuse: Callable[[MemcoreError], Response],
    max_body_bytes: int,
) -> McpEndpoint:
    """The MCP endpoint of the memory service. ``run``: how a call runs off the event loop (the
    service's own, with its timeout and drain accounting); ``refuse``: a typed error as the
    service's HTTP answer (a missing or bad key: 401)."""
    return McpEndpoint(build_server(None, run=run), bind_request, refuse, max_body_bytes)
