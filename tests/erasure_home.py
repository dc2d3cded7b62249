"""A home with a distinctive secret written through every plane, for the erasure tests (and the
child process the kill tests run): facts with history, documents, graph relations, SQL memory,
evidence from ``set_from_messages``, a resolver record; and the same for people the erasure must
leave alone."""

from __future__ import annotations

import tomllib
from datetime import timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from memory_core import FixedClock, Identity, Memory, MemoryTool
from tests.conftest import T0

# When a later process opens the home: after every write ``fill`` makes.
LATER = T0 + timedelta(days=30)


def open_home(home: Path, clock: FixedClock | None = None) -> Memory:
    return Memory.open(home, clock=clock or FixedClock(LATER), embedder="hashing")


def write_everywhere(memory: Memory, tool: MemoryTool, secret: str, scope: str, clock: FixedClock) -> None:
    """Every plane a run writes to, each holding ``secret``."""
    tool.set(f"gate-{secret}", f"the gate code is {secret}", scope=scope)
    clock.advance(timedelta(hours=1))
    tool.set(f"gate-{secret}", f"the gate code changed, it was {secret} before", scope=scope)  # history
    tool.set("hobby", f"plays the {secret} flute on Sundays", scope=scope, relations=[["I", "plays", secret]])
    tool.doc_put("diary", f"# Diary\n\nToday I wrote {secret} in my diary.\n", title=f"Diary of {secret}", scope=scope)
    tool.sql_exec("CREATE TABLE IF NOT EXISTS notes (body VARCHAR)", scope=scope)
    tool.sql_exec("INSERT INTO notes VALUES (?)", [f"note about {secret}"], scope=scope)
    messages = [{"role": "user", "name": "Ana", "content": f"I moved to {secret.title()}ville last year."}]
    tool.set_from_messages(messages, session="s1", scope=scope)
    # A pair the resolver retires one of: a resolver record.
    tool.set("office", f"the {secret} office is on the third floor of the north building", scope=scope)
    clock.advance(timedelta(days=1))
    tool.set("office-now", f"the {secret} office is on the fourth floor of the north building", scope=scope)
    clock.advance(timedelta(seconds=1))
    memory.resolve()


def configure(memory: Memory, tenant: str) -> None:
    # The write path leaves the office pair to the resolver (as tests/core/test_resolver.py does).
    memory.for_run(Identity(tenant=tenant, user="ops", admin=True)).configure(
        policy="auto_reinforce", conflict_threshold=0.99
    )


def tools(memory: Memory) -> dict[str, MemoryTool]:
    """The people of the home: ana (the one erased in a user erasure), bea (her colleague),
    the helper agent, and zed of another tenant."""
    return {
        "ana": memory.for_run(Identity(tenant="acme", user="ana", agent="helper", session="s1", run="r1")),
        "bea": memory.for_run(Identity(tenant="acme", user="bea", agent="scribe", session="s2", run="r2")),
        "helper": memory.for_run(Identity(tenant="acme", user="cyd", agent="helper", session="s3", run="r3")),
        "zed": memory.for_run(Identity(tenant="globex", user="zed", agent="helper", session="s4", run="r4")),
    }


SECRETS = {"ana": "zebracrossing", "bea": "quokkaparade", "helper": "marmotsummit", "zed": "pelicanharbor"}
SCOPES = {"ana": "user", "bea": "user", "helper": "agent", "zed": "user"}


# Who each person is as a consumer of context (an interaction and a signed receipt each): a user
# asking for themselves, or the agent.
CONSUMERS = {
    "ana": Identity(tenant="acme", user="ana"),
    "bea": Identity(tenant="acme", user="bea"),
    "helper": Identity(tenant="acme", user="cyd", agent="helper"),
    "zed": Identity(tenant="globex", user="zed"),
}


def load_lenses(memory: Memory, tenant: str, consumers: list[str]) -> None:
    roster = tomllib.loads((resources.files("memory_core.substrate") / "rosters" / "seven.toml").read_text())
    roster["assignments"] = {"developer": consumers}
    memory.for_run(Identity(tenant=tenant, user="root", admin=True)).lens_roster_load(roster)


def fill(memory: Memory, clock: FixedClock) -> None:
    configure(memory, "acme")
    configure(memory, "globex")
    load_lenses(memory, "acme", ["user:ana", "user:bea", "agent:helper"])
    load_lenses(memory, "globex", ["user:zed"])
    for name, tool in tools(memory).items():
        write_everywhere(memory, tool, SECRETS[name], SCOPES[name], clock)
        asking = memory.for_run(CONSUMERS[name])
        asking.get_context(query=f"what do I know about {SECRETS[name]}", scopes=[SCOPES[name]])
    memory.flush()


def view(tool: MemoryTool, scope: str) -> dict[str, Any]:
    """What a person reads back of a scope: the facts and their history, documents, SQL memory."""
    return {
        "facts": sorted((f.key, f.value, f.version) for f in tool.list(scope=scope)),
        "history": [
            (v.value, v.status.value)
            for k in sorted({f.key for f in tool.list(scope=scope)})
            for v in tool.history(k, scope=scope)
        ],
        "docs": sorted((d.key, d.title) for d in tool.doc_list(scope=scope)),
        "sql": tool.sql_query("SELECT body FROM notes ORDER BY body", scope=scope).rows,
    }
