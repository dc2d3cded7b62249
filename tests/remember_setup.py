"""A tenant with lenses, for remember's tests: an admin defines two permission groups and three
lenses, and assigns them.

- ``developer`` (lessons, decisions, general facts; read, capture, decide through ``contributors``)
  is worn by ``agent:bob``;
- ``analyst`` (metrics only; read and capture) by ``agent:bob`` and ``agent:eve``;
- ``auditor`` (everything, every lens's captures, any sensitivity; read only) by nobody.
"""

from __future__ import annotations

from memory_core import Identity, Memory, MemoryTool

TENANT = "acme"
BOB = Identity(tenant=TENANT, user="ana", agent="bob", session="s1")
EVE = Identity(tenant=TENANT, user="ana", agent="eve", session="s2")
ADMIN = Identity(tenant=TENANT, user="root", admin=True)


def define_lenses(admin: MemoryTool) -> None:
    admin.permission_group_define("contributors", ["read", "capture", "decide"])
    admin.lens_define(
        "developer",
        entity_types=["lesson", "decision", "general"],
        groups=["contributors"],
        preferences={"priorities": {"lesson": 2.0}},
    )
    admin.lens_define("analyst", entity_types=["metric"], capabilities=["read", "capture"])
    admin.lens_define(
        "auditor", entity_types=["*"], cross_lens=["*"], max_sensitivity="high", scopes=["agent", "user", "tenant"]
    )
    admin.lens_assign("developer", "agent:bob")
    admin.lens_assign("analyst", "agent:bob")
    admin.lens_assign("analyst", "agent:eve")


def lensed(memory: Memory) -> tuple[MemoryTool, MemoryTool, MemoryTool]:
    """(admin, bob, eve) on a home whose tenant has the lenses above."""
    admin = memory.for_run(ADMIN)
    define_lenses(admin)
    return admin, memory.for_run(BOB), memory.for_run(EVE)
