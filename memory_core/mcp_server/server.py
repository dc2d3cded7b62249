"""The MCP server over a tool source: ``tools/list`` names every op of the Memory tool, and
``tools/call`` runs one on a worker thread (the ops are synchronous; the event loop never waits on
the store or the network) and answers its result, or its typed refusal, as JSON text.

A *tool source* is a callable that answers the tool object the calls run on: an in-process
``MemoryTool`` (``lambda: memory.for_run(identity, origin="memcore.mcp")``) or a ``RemoteTool``
(``RemoteMemory(url, key).tool``). It is called on the worker thread, once per call, so it may
block. Either way the tool is already bound to one identity: no call can name another.

Over HTTP each request brings its own source (``bind_request``): the one built from the request's
API key, which wins over the server's default source.
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable, Mapping, TypeVar

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from ..errors import InternalError, MemcoreError, Unauthenticated
from .tools import MCP_TOOLS, refusal, result

log = logging.getLogger(__name__)

T = TypeVar("T")
ToolSource = Callable[[], Any]  # answers a MemoryTool or a RemoteTool, bound to one identity
Runner = Callable[[Callable[[], T]], Awaitable[T]]  # runs a blocking callable off the event loop

# Where the HTTP face leaves a request's tool source in the request's ASGI scope (the MCP transport
# hands the handlers the Starlette request it read, so the source travels with the request itself).
SOURCE_SCOPE_KEY = "memory_core.mcp.tool_source"

INSTRUCTIONS = (
    "The Memory tool: facts on two time axes (when true, when known), notes, documents and a graph, "
    "bound to one identity (the API key's or the process's). Every op names a scope (user by default). "
    'Results are JSON text; a refusal is an error result {"error": {"code", "status", "message"}}.'
)


async def _to_thread(fn: Callable[[], T]) -> T:
    return await anyio.to_thread.run_sync(fn)


def build_server(
    tool_source: ToolSource | None = None, *, run: Runner[Any] | None = None, name: str = "memory_core"
) -> Server[Any]:
    """The MCP server of the Memory tool. ``tool_source``: the tool the calls run on, when the
    request brings none (None: every request must bring one, as the HTTP face's do). ``run``:
    how a call's blocking work runs off the event loop (default: a worker thread; the service
    passes its own, which applies its request timeout and lets shutdown wait for the op)."""
    runner: Runner[Any] = run or _to_thread
    listed = [tool.describe() for tool in MCP_TOOLS.values()]
    schemas = {tool.name: tool.input_schema for tool in MCP_TOOLS.values()}

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
        tool = MCP_TOOLS.get(params.name)
        if tool is None:  # the spec's answer to an unknown tool is a protocol error, not a result
            raise MCPError(types.INVALID_PARAMS, f"unknown tool: {params.name}")
        source = _source(ctx) or tool_source
        arguments: Mapping[str, Any] = params.arguments or {}
        try:
            if source is None:
                raise Unauthenticated("a valid API key is required (Authorization: Bearer mck_...)")
            return result(await runner(lambda: tool.call(source(), arguments)))
        except MemcoreError as exc:
            return refusal(exc)
        except Exception as exc:  # noqa: BLE001 - every failure answers typed, without its text
            log.error("mcp tool %s failed: %s", tool.name, type(exc).__name__, exc_info=log.isEnabledFor(logging.DEBUG))
            return refusal(InternalError(f"internal error ({type(exc).__name__})"))

    return Server(
        name,
        version="1",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        # The 2026-07-28 HTTP entry checks Mcp-Param headers against the called tool's schema; the
        # table answers it without running tools/list on every call.
        get_tool_input_schema=schemas.get,
    )


def _source(ctx: ServerRequestContext[Any]) -> ToolSource | None:
    """The tool source the HTTP face bound to this request, if any (none over stdio)."""
    scope = getattr(ctx.request, "scope", None)
    return scope.get(SOURCE_SCOPE_KEY) if isinstance(scope, Mapping) else None
