"""The fact timeline notebook: lint-clean, and it runs to HTML against a small home."""

import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memory_core import FixedClock, Identity, Memory

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "fact_timeline.py"
MARIMO = [sys.executable, "-m", "marimo"]


@pytest.fixture
def fixture_home(tmp_path):
    clock = FixedClock(datetime(2024, 6, 1, tzinfo=timezone.utc))
    with Memory.open(tmp_path / "home", clock=clock) as memory:
        tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper", session="s1"))
        tool.set("city", "Berlin", valid_at="2021-01-01T00:00:00Z")
        clock.advance(timedelta(days=2))
        tool.set("city", "Paris", valid_at="2023-03-01T00:00:00Z")
        clock.advance(timedelta(days=2))
        tool.delete("city")
        clock.advance(timedelta(days=1))
        tool.restore("city")
    return tmp_path / "home"


def export(tmp_path, *args):
    out = tmp_path / "fact_timeline.html"
    done = subprocess.run(
        [*MARIMO, "export", "html", str(NOTEBOOK), "-o", str(out), "--", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done, out.read_text(encoding="utf-8") if out.exists() else ""


def test_marimo_check_strict_passes():
    done = subprocess.run([*MARIMO, "check", "--strict", str(NOTEBOOK)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_it_exports_the_timeline_of_a_key_with_no_cell_error(tmp_path, fixture_home):
    done, html = export(tmp_path, "--home", str(fixture_home))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Fact timeline" in html and "Paris" in html and "image/png" in html
    assert "vnd.marimo+traceback" not in html


def test_without_a_home_it_says_where_it_looked(tmp_path):
    done, html = export(tmp_path, "--home", str(tmp_path / "nowhere"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No memory home" in html and "vnd.marimo+traceback" not in html
