"""The public API: ``Memory`` (an open home) and ``MemoryTool`` (the tool bound to a run)."""

from .memory import Memory
from .tool import MemoryTool

__all__ = ["Memory", "MemoryTool"]
