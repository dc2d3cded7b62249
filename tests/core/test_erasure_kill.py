"""A saga killed with SIGKILL at each step boundary (and in the middle of steps: the work done,
its checkpoint not written) resumes under recovery and ends with a verified zero census."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memory_core import FixedClock
from memory_core.erasure import STEPS, ErasureStatus
from tests.conftest import T0
from tests.core.test_erasure import files_holding
from tests.erasure_home import SCOPES, SECRETS, fill, open_home, tools, view

ROOT = Path(__file__).resolve().parents[2]
POINTS = ["before:collect", *(f"after:{s}" for s in STEPS), *(f"mid:{s}" for s in ("index", "rows", "compact"))]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    home = tmp_path_factory.mktemp("erasure") / "home"
    clock = FixedClock(T0)
    with open_home(home, clock) as memory:
        fill(memory, clock)
    with open_home(home) as memory:  # as the child and the recovery see it
        kept = {name: view(tools(memory)[name], SCOPES[name]) for name in ("bea", "helper", "zed")}
    return home, kept


@pytest.mark.parametrize("point", POINTS)
def test_a_saga_killed_at_any_point_recovers_to_a_verified_zero_census(template, tmp_path, point):
    source, kept = template
    home = tmp_path / "home"
    shutil.copytree(source, home)
    child = subprocess.run(
        [sys.executable, "-m", "tests.erasure_child", str(home), point],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, child.stdout + child.stderr
    with open_home(home) as memory:
        [stopped] = memory.erasures()
        if point == "after:census":
            assert stopped.status is ErasureStatus.VERIFIED  # it had finished: nothing to resume
        else:
            assert stopped.holding
        memory.recover_erasures()
        [done] = memory.erasures()
        assert done.status is ErasureStatus.VERIFIED, done.error
        assert done.residue_count == 0
        assert memory.verify_audit().ok
        for name, before in kept.items():
            assert view(tools(memory)[name], SCOPES[name]) == before
    assert not files_holding(home, SECRETS["ana"])
