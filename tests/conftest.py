from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

import pytest

from memory_core import FixedClock, Identity, Memory, MemoryTool

T0 = datetime(2024, 6, 1, 9, 0, tzinfo=timezone.utc)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=timezone.utc)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def memory(home: Path, clock: FixedClock) -> Iterator[Memory]:
    with Memory.open(home, clock=clock) as m:
        yield m


@pytest.fixture
def indexed_memory(home: Path, clock: FixedClock) -> Iterator[Memory]:
    """A home with the (test-only) hashing embedder: peers are judged, recall and search work."""
    with Memory.open(home, clock=clock, embedder="hashing") as m:
        yield m


@pytest.fixture
def tool_for(memory: Memory) -> Callable[..., MemoryTool]:
    def make(tenant: str = "acme", user: str | None = "ana", agent: str | None = "helper", **kw: object) -> MemoryTool:
        return memory.for_run(Identity(tenant=tenant, user=user, agent=agent, session="s1", run="r1", **kw))

    return make


@pytest.fixture
def tool(tool_for: Callable[..., MemoryTool]) -> MemoryTool:
    return tool_for()


def store_snapshot(memory: Memory) -> dict[str, list[tuple]]:
    """Every row of every table: equal snapshots mean nothing was written."""
    return memory.store.inspection.tables()


@pytest.fixture(autouse=True)
def face(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``local``, or in a module marked ``faces`` also ``remote`` (every ``Memory.for_run`` of the
    test answers a remote tool served over HTTP: ``tests/remote_face.py``) and ``postgres`` (every
    ``Memory.open`` of the test opens its home over a PostgreSQL authority: ``tests/pg.py``)."""
    name = getattr(request, "param", "local")
    if name == "postgres":
        from tests.pg import on_postgres

        with on_postgres():
            yield name
        return
    if name != "remote":
        yield name
        return
    from tests.remote_face import RemoteFace

    remote = RemoteFace()
    monkeypatch.setattr(
        Memory, "for_run", lambda self, identity, *, origin="memory.api": remote.for_run(self, identity, origin=origin)
    )
    try:
        yield name
    finally:
        remote.close()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker("faces"):
        metafunc.parametrize("face", ["local", "remote", "postgres"], indirect=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Drop the PostgreSQL schemas the tests made (``tests/pg.py``), if any."""
    from tests.pg import POOL
    from tests.services import DEFAULT_PG_URL, PG_ENV

    if POOL.made:
        import os

        POOL.drop_all(os.environ.get(PG_ENV, "").strip() or DEFAULT_PG_URL)
