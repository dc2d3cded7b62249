"""The Memory tool as an MCP server (built in a later step of this change)."""
