"""``memcore serve``: the Memory tool over HTTP. One process owns the home; every op of the tool
is ``POST /v1/<op>`` with a JSON object of its arguments, answered ``{"result": ...}`` in the wire
form (``memory_core.wire``) or ``{"error": {"code", "status", "message"}}`` with the typed error's
status. The caller's identity is its API key's (``Authorization: Bearer mck_...``); a body or
query that names a tenant, user, agent or grant is refused.

Also: ``GET /healthz``, ``GET /metrics`` (Prometheus text), ``GET /v1/whoami``, the key admin
routes (``/v1/keys``), the home's maintenance ops (``/v1/admin/<op>``, admin keys only), the
OpenAPI schema at ``/v1/openapi.json`` and the tool as an MCP server (streamable HTTP) at ``/mcp``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable

import anyio
from fastapi import FastAPI
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from ..access import ApiKey, refuse_identity_fields
from ..api import Memory
from ..api.ops import LOCAL_ONLY, TOOL_OPS, Op
from ..api.upkeep import IndexUpkeep
from ..api.webhook_worker import WebhookWorker
from ..errors import InternalError, InvalidInput, MemcoreError, NotFound, UnknownOp
from ..mcp_server import mcp_endpoint
from ..webhooks import DeliveryPolicy
from ..wire import decode_any
from . import admin, remember_routes, schemas
from .direct import ServiceApp, direct
from .guards import ServiceSettings, read_body
from .state import (
    ANSWERED_ON_LOOP,
    ServiceState,
    error_response,
    json_response,
)

log = logging.getLogger(__name__)

Handler = Callable[[Request, ApiKey], Awaitable[Response]]


def measured(state: ServiceState, op: str, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """A route: the key checked, the handler run, every failure answered as a typed error, and the
    request counted, timed and logged. It needs nothing of the framework (``direct``)."""

    async def endpoint(request: Request) -> Response:
        started = time.perf_counter()
        state.metrics.started()
        key: ApiKey | None = None
        status = 500
        try:
            key = await state.authenticate(request)
            response = await handler(request, key)
        except MemcoreError as exc:
            response = error_response(exc)
        except (KeyboardInterrupt, SystemExit, asyncio.CancelledError):
            raise
        except BaseException as exc:  # noqa: BLE001 - every failure is answered typed, without its text;
            # BaseException, because an engine's panic (pyo3's PanicException) is not an Exception.
            log.error("op %s failed: %s", op, type(exc).__name__, exc_info=log.isEnabledFor(logging.DEBUG))
            response = error_response(InternalError(f"internal error ({type(exc).__name__})"))
        status = response.status_code
        seconds = time.perf_counter() - started
        state.metrics.finished(op, status, seconds)
        if state.logs_access:
            # Written once the answer is sent: the line cost a request about 0.15 ms at p50
            # before its answer left (docs/benchmarks.md, "The access log after the answer").
            async def log_access() -> None:
                state.log_access(request, op, status, seconds, key)

            response.background = BackgroundTask(log_access)
        return response

    return direct(endpoint)


def tool_handler(state: ServiceState, op: Op) -> Handler:
    async def handle(request: Request, key: ApiKey) -> Response:
        refuse_identity_fields(request.query_params, "query")
        body = await read_body(request, state.settings.max_body_bytes)
        refuse_identity_fields(body, "body")
        local = sorted(LOCAL_ONLY & body.keys())
        if local:
            raise InvalidInput(
                f"{op.name}: {', '.join(local)} is a Python object and cannot cross the wire", field=local[0]
            )
        args = {name: decode_any(value) for name, value in body.items()}
        tool = state.request_tool(key, request)

        def call() -> Any:
            return getattr(tool, op.name)(**args)

        if op.name in ANSWERED_ON_LOOP:
            now = state.answer_now(call, op.returns)
            if now is not None:
                return now
        return await state.answer(call, op.returns)

    return handle


KEY_SCOPE = "memcore.key"


class _MeasuredAsgi:
    """An ASGI app (the MCP transport answers itself) counted, timed and logged as ``op``, as
    every ``/v1`` route is. A class, not a function: Starlette would take a function for a
    request-to-response endpoint."""

    def __init__(self, state: ServiceState, op: str, app: Any) -> None:
        self.state, self.op, self.app = state, op, app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        started, status = time.perf_counter(), 500
        self.state.metrics.started()

        async def sending(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            seconds = time.perf_counter() - started
            self.state.metrics.finished(self.op, status, seconds)
            self.state.log_access(Request(scope), self.op, status, seconds, scope.get(KEY_SCOPE))


async def _mcp_tool_source(state: ServiceState, request: Request) -> Callable[[], Any]:
    """An MCP request's tool: its key checked (a missing or bad one refuses the request), its
    identity the key's, as for ``/v1``."""
    key = await state.authenticate(request)
    request.scope[KEY_SCOPE] = key  # for the access log (``_MeasuredAsgi``)
    tool = state.request_tool(key, request, origin="memcore.mcp")
    return lambda: tool


def _whoami(state: ServiceState) -> Handler:
    async def whoami(request: Request, key: ApiKey) -> Response:
        return json_response({"result": key.summary(state.memory.clock.now())})

    return whoami


def _health(state: ServiceState) -> Callable[[Request], Awaitable[Response]]:
    async def health(request: Request) -> Response:
        status = 503 if state.draining else 200
        return json_response({"status": "draining" if state.draining else "ok", "pid": os.getpid()}, status)

    return health


def _metrics(state: ServiceState) -> Callable[[Request], Awaitable[Response]]:
    async def metrics(request: Request) -> Response:
        index = state.memory.session.built_index
        # Read once per scrape, on a worker: it counts the table's rows and asks the store.
        status = await anyio.to_thread.run_sync(index.status) if index is not None else {}
        upkeep, hooks = state.upkeep, state.webhooks
        gauges = {
            "memcore_index_queue": ("Facts waiting for the next index write.", float(state.memory.index_queued())),
            "memcore_index_unindexed_rows": (
                "Index rows not yet folded into the search structures.",
                float(status.get("unindexed_rows", 0)),
            ),
            "memcore_index_unsettled_rows": (
                "Index rows replaced by newer states, filtered until the index settles (at most).",
                float(status.get("unsettled_rows", 0)),
            ),
            "memcore_index_unsettled_appends": (
                "Fragments appended since the index's last fold.",
                float(status.get("unsettled_appends", 0)),
            ),
            "memcore_ops_running": (
                "Ops running on worker threads (a timed-out op counts until it ends).",
                float(state.running),
            ),
        }
        counters = {
            "memcore_index_upkeep_rounds_total": (
                "Rounds of the index upkeep thread that wrote, settled or folded the index.",
                float(upkeep.tended if upkeep is not None else 0),
            ),
            "memcore_index_upkeep_failures_total": (
                "Rounds of the index upkeep thread that failed (each is logged).",
                float(upkeep.failed if upkeep is not None else 0),
            ),
            "memcore_ops_on_loop_total": (
                "Ops answered on the event loop, with nothing to wait for (a get held in memory).",
                float(state.loop_answers),
            ),
            "memcore_ops_loop_fallbacks_total": (
                "Ops tried on the event loop that would have waited, and ran on a worker thread.",
                float(state.loop_fallbacks),
            ),
            "memcore_webhook_deliveries_total": (
                "Change-webhook events delivered by this service's worker.",
                float(hooks.delivered if hooks is not None else 0),
            ),
            "memcore_webhook_failed_attempts_total": (
                "Change-webhook attempts that did not deliver (retried later, or dead-lettered).",
                float(hooks.attempts_failed if hooks is not None else 0),
            ),
        }
        return PlainTextResponse(state.metrics.render(gauges, counters), media_type="text/plain; version=0.0.4")

    return metrics


def create_app(memory: Memory, settings: ServiceSettings | None = None, *, owns_memory: bool = False) -> ServiceApp:
    """The service over an open ``memory``. ``owns_memory``: close it when the service stops
    (``memcore serve``); otherwise the caller closes it (a test sharing the home in-process)."""
    state = ServiceState(memory, settings or ServiceSettings(), owns_memory=owns_memory)
    mcp = mcp_endpoint(
        lambda request: _mcp_tool_source(state, request),
        run=state.run,
        refuse=error_response,
        max_body_bytes=state.settings.max_body_bytes,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state.upkeep = upkeep = IndexUpkeep(memory, state.settings.upkeep_interval_s).start()
        policy = DeliveryPolicy(lease_s=state.settings.webhook_lease_s)
        state.webhooks = webhooks = WebhookWorker(memory, state.settings.webhook_interval_s, policy).start()
        try:
            async with mcp.running():  # the MCP transport's task group lives as long as the app serves
                yield
        finally:
            webhooks.stop()
            upkeep.stop()
        drained = state.drain()
        log.info("memory service stopped (%s)", "drained" if drained else "ops still running at the drain timeout")

    app = ServiceApp(
        title="memory_core",
        summary="The Memory tool over HTTP: every op of MemoryTool, typed errors, identity from the API key.",
        version="1",
        openapi_url="/v1/openapi.json",
        docs_url="/v1/docs",
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.service = state

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 404:
            return error_response(UnknownOp(f"no such route: {request.method} {request.url.path}"))
        error = MemcoreError(str(exc.detail))
        error.status, error.code = exc.status_code, "METHOD_NOT_ALLOWED" if exc.status_code == 405 else "BAD_REQUEST"
        return error_response(error)

    app.add_api_route("/healthz", _health(state), methods=["GET"], include_in_schema=False)
    app.add_api_route("/metrics", _metrics(state), methods=["GET"], include_in_schema=False)
    app.add_api_route(
        "/v1/whoami",
        measured(state, "whoami", _whoami(state)),
        methods=["GET"],
        summary="The identity this key stands for",
    )
    for op in TOOL_OPS.values():
        app.add_api_route(
            f"/v1/{op.name}",
            measured(state, op.name, tool_handler(state, op)),
            methods=["POST"],
            name=op.name,
            summary=op.doc.split("\n")[0],
            description=op.doc,
            tags=["memory tool"],
        )
    admin.register(app, state, measured)
    remember_routes.register(app, state, measured, tool_handler)
    # An ASGI app: the MCP transport answers itself.
    app.add_route("/mcp", _MeasuredAsgi(state, "mcp", mcp), include_in_schema=False)
    _describe_ops(app)
    app.index_direct_routes()
    return app


def _describe_ops(app: FastAPI) -> None:
    """The published schema gains each op's arguments and answer, the first time it is asked for."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schemas.describe(build(), TOOL_OPS.values())
        return app.openapi_schema

    app.openapi = openapi  # FastAPI's documented way to extend the schema


__all__ = ["NotFound", "ServiceSettings", "create_app"]
