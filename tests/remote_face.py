"""The remote face for the behaviour suite: in a module marked ``faces``, each test runs twice,
once on the in-process tool and once with every ``Memory.for_run`` answered by a ``RemoteTool``
talking HTTP to a real service (uvicorn on 127.0.0.1, on a thread) over the same open home.

The keys a remote run needs are kept in an in-memory ``ApiKeyStore`` (a port implementation), so
the home holds exactly what the test wrote and the suite's "nothing was written" checks stay exact.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memory_core import Identity, Memory
from memory_core.access import ApiKey
from memory_core.audit import AuditEntry
from memory_core.client import RemoteMemory
from memory_core.service import ThreadedServer
from memory_core.services.access import AccessService


class InMemoryApiKeys:
    """``ApiKeyStore`` in a dict: the keys of one test."""

    def __init__(self) -> None:
        self.keys: dict[str, ApiKey] = {}

    def add(self, key: ApiKey, audit: AuditEntry) -> None:
        self.keys[key.key_id] = key

    def find(self, key_id: str) -> ApiKey | None:
        return self.keys.get(key_id)

    def list(self, tenant: str | None = None) -> list[ApiKey]:
        return [k for k in self.keys.values() if tenant is None or k.tenant == tenant]

    def revoke(self, key_id: str, at: datetime, audit: AuditEntry) -> bool:
        return False


class RemoteFace:
    """Serves each home a test opens, on first use, and hands out remote tools for identities."""

    def __init__(self) -> None:
        self.local_for_run = Memory.for_run
        self._served: dict[int, tuple[Memory, ThreadedServer, dict[tuple, str]]] = {}
        self._clients: list[RemoteMemory] = []
        self.calls = 0

    def for_run(self, memory: Memory, identity: Identity, *, origin: str = "memory.api") -> Any:
        if identity.isolated:  # a key carries no isolation flag: that run stays in-process
            return self.local_for_run(memory, identity, origin=origin)
        _, server, tokens = self._serve(memory)
        grant = (
            identity.tenant,
            identity.user,
            identity.agent,
            identity.memory_scopes,
            identity.sql_scopes,
            identity.admin,
        )
        if grant not in tokens:
            tokens[grant], _ = memory.keys.create(
                tenant=identity.tenant,
                user=identity.user,
                agent=identity.agent,
                memory_scopes=identity.memory_scopes,
                sql_scopes=identity.sql_scopes,
                admin=identity.admin,
            )
        client = RemoteMemory(
            server.url, tokens[grant], session=identity.session, run=identity.run, model=identity.model
        )
        self._clients.append(client)
        self.calls += 1
        return client.tool()

    def _serve(self, memory: Memory) -> tuple[Memory, ThreadedServer, dict[tuple, str]]:
        served = self._served.get(id(memory))
        if served is None:
            memory.keys = AccessService(memory.session, InMemoryApiKeys())
            served = (memory, ThreadedServer(memory).start(), {})
            self._served[id(memory)] = served
        return served

    def close(self) -> None:
        for client in self._clients:
            client.close()
        for _, server, _ in self._served.values():
            server.stop()
