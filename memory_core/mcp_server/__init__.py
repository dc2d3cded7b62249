"""The Memory tool as an MCP server: the same ops as ``MemoryTool`` (``memory_set``,
``memory_recall``, ``doc_put``, ``graph_recall``, ...), each with a JSON Schema of its arguments,
answering JSON text or a typed error result.

Two transports: stdio (``run_stdio(tool_source)``; ``memcore mcp --url URL --key KEY`` passes a
remote tool's source, see ``stdio``) and streamable HTTP (``mcp_endpoint``, which the memory service
routes at ``/mcp`` behind its API keys). ``build_server`` is the server itself, for any other
transport or an in-process client.
"""

from .http import McpEndpoint, mcp_endpoint
from .server import ToolSource, build_server
from .stdio import run_stdio, serve_stdio
from .tools import MCP_TOOLS, McpTool

__all__ = [
    "MCP_TOOLS",
    "McpEndpoint",
    "McpTool",
    "ToolSource",
    "build_server",
    "mcp_endpoint",
    "run_stdio",
    "serve_stdio",
]
