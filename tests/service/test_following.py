"""Following a shared authority (``session.follow``): an index's stored watermark never passes a
row another replica committed that this replica's index has not taken, since a restart replays
only what lies past the watermark. Two in-process replicas over one PostgreSQL authority."""

from __future__ import annotations

from typing import Iterator

import pytest

from memory_core import Identity, Memory
from tests.pg import fresh_store_url

ANA = Identity(tenant="acme", user="ana")


@pytest.fixture
def store_url() -> Iterator[str]:
    yield from fresh_store_url()


def test_a_write_made_elsewhere_while_a_flush_waits_for_the_lock_survives_a_restart(tmp_path, store_url):
    """A flush catches up with the other replicas before it takes the store's lock, so another
    replica can commit in between. The watermark the flush stores must not cover that row until
    the index holds it: killed then, the replica would never index it (the row stays served at
    its older version for good)."""
    options = {"store": store_url, "key_dir": str(tmp_path / "keys"), "embedder": "hashing"}
    a = Memory.open(tmp_path / "a", **options)
    b = Memory.open(tmp_path / "b", **options)
    here, there = a.for_run(ANA), b.for_run(ANA)
    here.set("city", "lives in Lisbon near the river")
    assert [h.key for h in there.recall("Lisbon river", k=5).hits] == ["city"]  # b's index holds it
    moved = []
    catch_up = b.projector.follow
    assert catch_up is not None

    def caught_up_then_another_replica_writes() -> object:
        done = catch_up()
        if not moved:  # the first catch-up of the flush below: a's write lands right after it
            moved.append(here.set("city", "moved to Porto by the sea"))
        return done

    b.projector.follow = caught_up_then_another_replica_writes
    there.set("pet", "a cat named Miso")  # queued in b: its flush takes the store's lock
    b.flush()  # stores the watermark
    assert moved
    # b is killed here (never closed: a close would catch up once more). Its home reopened:
    try:
        with Memory.open(tmp_path / "b", **options) as restarted:
            hits = restarted.for_run(ANA).recall("Porto by the sea", k=5).hits
            assert [(h.key, h.version_id) for h in hits if h.key == "city"] == [("city", here.get("city").id)]
            found = restarted.projector.consistency()
            assert not (found.missing or found.stale or found.duplicated), found
    finally:
        b.projector.follow = catch_up
        b.close()
        a.close()
