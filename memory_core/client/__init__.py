"""The remote client of the memory service: ``RemoteMemory(url, key).tool()`` has the methods,
arguments, answers and typed errors of ``MemoryTool``."""

from .remote import RemoteMemory, RemoteTool

__all__ = ["RemoteMemory", "RemoteTool"]
