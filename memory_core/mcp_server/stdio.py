"""The MCP server over stdio (``memcore mcp``): one MCP client (an agent host) talks to this
process on its stdin and stdout, and every call runs on the tool the source answers.

The contract with the CLI: this package sits beside ``memory_core.client`` in the layers and may
not import it, so the caller hands in the tool source. ``memcore mcp --url URL --key KEY`` calls

    with RemoteMemory(url, key) as remote:
        run_stdio(remote.tool)

(``run_stdio(lambda: RemoteMemory(url, key).tool())`` works too; closing the ``RemoteMemory``
afterwards is then left to the process's exit). The source is called once, on a worker thread,
when the first tool call arrives, and its tool is kept for every later call; a source that fails
(the service unreachable, the key refused) answers that call's typed error and is tried again on
the next one. While serving, stdout carries only the protocol: stray prints land on stderr.
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from .server import ToolSource, build_server


def run_stdio(tool_source: ToolSource) -> None:
    """Serve the Memory tool over stdio until the client closes stdin."""
    anyio.run(serve_stdio, tool_source)


async def serve_stdio(tool_source: ToolSource) -> None:
    """``run_stdio`` inside a running event loop."""
    server = build_server(once(tool_source))
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def once(tool_source: ToolSource) -> ToolSource:
    """``tool_source`` called until it first answers, then its tool kept: a remote tool asks the
    service who its key is when made, which one process needs only once."""
    lock = threading.Lock()
    made: list[Any] = []

    def source() -> Any:
        with lock:  # calls run on worker threads: one of them makes the tool, the others wait
            if not made:
                made.append(tool_source())
            return made[0]

    return source
