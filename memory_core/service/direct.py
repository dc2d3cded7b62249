"""The service's app: FastAPI, with each fixed route of the service's own answered directly.

Every ``/v1`` route is one ``measured`` endpoint: a function of the request that checks the key,
runs the op, and answers every failure as a typed error itself. It needs nothing of the framework
(no parameters to solve, no dependencies, no exception handlers), yet through FastAPI each request
still passed three middlewares, the router's match over a hundred routes, and the dependency
solver: 0.27 ms of a get's 3.4 ms at p50 in the paced benchmark (docs/benchmarks.md). Here a
request whose method and path name such a route is handed to its endpoint at once; every other
request (the MCP transport, the OpenAPI schema, a route with a path parameter, a 404) goes through
FastAPI, which also keeps every route for the published schema. Once a middleware is added to the
app, every request goes through FastAPI again, so that middleware sees them all.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

Endpoint = Callable[[Request], Awaitable[Response]]

_DIRECT = "_memcore_direct"


def direct(endpoint: Endpoint) -> Endpoint:
    """Mark ``endpoint`` as needing nothing of the framework: it answers every failure itself."""
    setattr(endpoint, _DIRECT, True)
    return endpoint


class ServiceApp(FastAPI):
    """FastAPI, with the fixed routes of ``direct`` endpoints answered without its layers (call
    ``index_direct_routes`` once every route is added)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.direct_routes: dict[tuple[str, str], Endpoint] = {}

    def index_direct_routes(self) -> None:
        self.direct_routes = {
            (method, route.path): route.endpoint
            for route in self.router.routes
            if isinstance(route, APIRoute) and getattr(route.endpoint, _DIRECT, False) and "{" not in route.path
            for method in route.methods
        }

    def _direct_endpoint(self, scope: dict[str, Any]) -> Endpoint | None:
        if scope["type"] != "http" or self.user_middleware or self.root_path or scope.get("root_path"):
            return None
        return self.direct_routes.get((scope["method"], scope["path"]))

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        endpoint = self._direct_endpoint(scope)
        if endpoint is None:
            await super().__call__(scope, receive, send)
            return
        scope["app"] = self
        response = await endpoint(Request(scope, receive, send))
        await response(scope, receive, send)
