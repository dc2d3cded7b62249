"""Opening a memory home fails only with typed errors: a home another process holds is
``HomeBusy`` (423), never DuckDB's raw lock error; a damaged store, a file where the home should
be, a home that cannot be made are typed too. The holder is a real second process."""

from __future__ import annotations

import os
import sys

import pytest

from memory_core import Memory
from memory_core.errors import HomeBusy, HomeUnusable, StoreCorrupted
from tests.holder import held, make_home


@pytest.mark.parametrize("read_only", [False, True])
def test_a_home_held_by_a_writer_is_busy_for_everyone_else(home, read_only):
    make_home(home)
    with held(home) as holder:
        with pytest.raises(HomeBusy) as refused:
            Memory.open(home, read_only=read_only)
    error = refused.value
    assert (error.status, error.code) == (423, "HOME_BUSY")
    assert error.details["holder_pid"] == holder.pid and f"PID {holder.pid}" in error.message
    assert "another process" in error.message and "Close" in error.message
    with Memory.open(home, read_only=read_only):  # the holder is gone: the home opens again
        pass


def test_a_reader_keeps_a_writer_out_but_not_another_reader(home):
    make_home(home)
    with held(home, "read_only") as holder:
        with pytest.raises(HomeBusy) as refused:
            Memory.open(home)
        assert refused.value.details["holder_pid"] == holder.pid
        with Memory.open(home, read_only=True):  # readers share the home
            pass


def test_this_process_holding_the_home_in_the_other_mode_is_busy_too(home):
    make_home(home)
    with Memory.open(home):
        with pytest.raises(HomeBusy) as refused:
            Memory.open(home, read_only=True)
    assert refused.value.details["holder_pid"] == os.getpid()


@pytest.mark.parametrize("options", [{}, {"read_only": True}, {"create": False}])
def test_a_file_where_the_home_should_be_is_unusable(tmp_path, options):
    path = tmp_path / "home"
    path.write_text("not a folder")
    with pytest.raises(HomeUnusable) as refused:
        Memory.open(path, **options)
    assert refused.value.code == "HOME_UNUSABLE" and refused.value.details["reason"] == "not_a_folder"
    assert path.read_text() == "not a folder"


def test_a_folder_where_the_store_file_should_be_is_unusable(home):
    (home / "memory.duckdb").mkdir(parents=True)
    with pytest.raises(HomeUnusable):
        Memory.open(home)


@pytest.mark.parametrize(
    "damage",
    [
        lambda db: db.write_bytes(os.urandom(20_000)),  # not a DuckDB file at all
        lambda db: db.write_bytes(b""),  # empty
        lambda db: db.write_bytes(db.read_bytes()[: db.stat().st_size // 2]),  # truncated
    ],
)
@pytest.mark.parametrize("read_only", [False, True])
def test_a_damaged_store_is_store_corrupted(home, damage, read_only):
    make_home(home)
    damage(home / "memory.duckdb")
    with pytest.raises(StoreCorrupted) as refused:
        Memory.open(home, read_only=read_only)
    assert refused.value.status == 500 and "memory.duckdb" in refused.value.message


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a folder no process may create (/sys)")
def test_a_home_that_cannot_be_created_is_unusable():
    with pytest.raises(HomeUnusable) as refused:
        Memory.open("/sys/memcore-test-home")
    assert refused.value.details["reason"] == "os_error"
