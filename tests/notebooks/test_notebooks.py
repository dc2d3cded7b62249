"""Every notebook: lint-clean, exported to HTML against a small home, rendered in headless
Chromium with no error output, and a screenshot kept (``.screenshots/`` in the repository)."""

import subprocess
import sys
from pathlib import Path

import pytest

from memory_core import Memory
from tests.dreams_home import LOOSE, fill_dreams_home
from tests.lens_home import fill_lens_home
from tests.review_home import fill_review_home
from tools.screenshots import export_notebook, find_chromium, localize, rendered_text, screenshot

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ["fact_timeline", "eval_report", "review_queue", "lens_explorer", "dreams_review"]
KEPT = ROOT / ".screenshots"
LENS_TENANT = "lenses"
DREAMS_TENANT = "dreams"
EXTRA_ARGS = {"lens_explorer": ("--tenant", LENS_TENANT)}


@pytest.fixture(scope="module")
def fixture_home(tmp_path_factory):
    """A small home with a key's history, a flagged pair for the review queue, and reports."""
    from evals.coref import run as coref_run
    from evals.resolver_calibration import run as calibration_run
    from memory_core.clock import FixedClock
    from tests.conftest import T0

    home = tmp_path_factory.mktemp("notebook-home") / "home"
    clock = FixedClock(T0)
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = fill_review_home(memory, clock)
        assert tool.review_queue()
        fill_lens_home(memory, tenant=LENS_TENANT)  # beside the review home's tenant, not in it
        fill_dreams_home(memory, clock, tenant=DREAMS_TENANT)  # and a tenant that needs every Dreams kind
        queued = {p.owner_id: len(p.proposals) for p in memory.dream_all(tenant=DREAMS_TENANT, min_cosine=LOOSE)}
        assert queued["ana"] == 4
    nowhere = tmp_path_factory.mktemp("no-shared")
    coref_run(None, nowhere, home / "reports" / "coref")
    calibration_run(None, nowhere, home / "reports" / "resolver")
    return home


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_marimo_check_strict_passes(name):
    done = subprocess.run(
        [sys.executable, "-m", "marimo", "check", "--strict", str(ROOT / "notebooks" / f"{name}.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    "name, expected",
    [
        ("fact_timeline", ["Fact timeline", "Paris"]),
        ("eval_report", ["Evaluation report", "whole-batch", "Conflict resolver calibration"]),
        ("review_queue", ["Review queue", "office-now"]),
        ("lens_explorer", ["Lens explorer", "p95 latency", "verifies", "The contracts"]),
        ("dreams_review", ["Dreams review", "procedure:build", "consolidated:alps-ana-hiking"]),
    ],
)
def test_exports_with_no_cell_error_and_renders_in_chromium(tmp_path, fixture_home, name, expected):
    html = tmp_path / f"{name}.html"
    done = export_notebook(name, html, "--home", str(fixture_home), *EXTRA_ARGS.get(name, ()), include_code=True)
    assert done.returncode == 0, done.stdout + done.stderr
    text = html.read_text(encoding="utf-8")
    assert "vnd.marimo+traceback" not in text
    for word in expected:
        assert word in text, word
    if find_chromium() is None:
        pytest.skip("chromium is not installed (Debian package `chromium`): `make test` installs it when it can")
    page = localize(html).as_uri()
    dom = rendered_text(page)
    assert expected[0] in dom, "the page did not render (front end not loaded?)"
    assert "Traceback" not in dom and "marimo-error" not in dom
    png = screenshot(page, KEPT / f"{name}.png")
    if png.stat().st_size <= 20_000:  # once, on a loaded host, chromium shot the page before painting it
        png = screenshot(page, KEPT / f"{name}.png")
    assert png.stat().st_size > 20_000  # a rendered page, not a blank one


def test_without_a_home_each_notebook_says_where_it_looked(tmp_path):
    for name in ("fact_timeline", "review_queue", "lens_explorer", "dreams_review"):
        html = tmp_path / f"{name}.html"
        done = export_notebook(name, html, "--home", str(tmp_path / "nowhere"))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "No memory home" in html.read_text(encoding="utf-8")
