"""memory_core: agent memory on two time axes.

Import what you need from here; nothing is opened or read at import time.
"""

from .api import Memory, MemoryTool
from .clock import Clock, FixedClock, SystemClock
from .errors import MemcoreError
from .identity import Identity, Namespace, Scope
from .model import FactVersion, Kind, Op, Provenance, Status, WriteResult

__all__ = [
    "Clock",
    "FactVersion",
    "FixedClock",
    "Identity",
    "Kind",
    "Memory",
    "MemcoreError",
    "MemoryTool",
    "Namespace",
    "Op",
    "Provenance",
    "Scope",
    "Status",
    "SystemClock",
    "WriteResult",
]
