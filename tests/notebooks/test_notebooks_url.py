"""The notebooks through a memory service (``-- --url URL --key KEY``): they read what the
service's home holds, while the service owns it, and say so when the key cannot."""

import pytest

from memory_core import FixedClock, Memory
from memory_core.service import ThreadedServer
from tests.conftest import T0
from tests.lens_home import fill_lens_home
from tests.review_home import fill_review_home
from tools.screenshots import export_notebook


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """(URL, admin key, a tenant's key) of a service over a small home: a key's history and a
    flagged pair for the review queue."""
    home = tmp_path_factory.mktemp("served-notebook-home") / "home"
    clock = FixedClock(T0)
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        fill_review_home(memory, clock)
        admin, _ = memory.keys.create(tenant="ops", user="reviewer", admin=True)
        tenant, _ = memory.keys.create(tenant="acme", user="ana")
        with ThreadedServer(memory) as server:
            yield server.url, admin, tenant


def exported(tmp_path, name, *args):
    html = tmp_path / f"{name}.html"
    done = export_notebook(name, html, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    text = html.read_text(encoding="utf-8")
    assert "vnd.marimo+traceback" not in text
    return text


def test_the_fact_timeline_reads_through_the_service(tmp_path, service):
    url, admin, _ = service
    html = exported(tmp_path, "fact_timeline", "--url", url, "--key", admin)
    assert "Fact timeline" in html and "Memory service" in html
    assert "Paris" in html and "Berlin" in html and "image/png" in html


def test_the_review_queue_reads_through_the_service_with_the_key_from_the_environment(tmp_path, service, monkeypatch):
    url, admin, _ = service
    monkeypatch.setenv("MEMCORE_KEY", admin)
    html = exported(tmp_path, "review_queue", "--url", url)
    assert "Review queue" in html and "1 namespace(s) with conflicted rows" in html and "office-now" in html


@pytest.mark.parametrize("name", ["fact_timeline", "review_queue"])
def test_a_key_that_is_not_an_admin_key_is_told_so(tmp_path, service, monkeypatch, name):
    url, _, tenant = service
    monkeypatch.delenv("MEMCORE_KEY", raising=False)
    html = exported(tmp_path, name, "--url", url)
    assert "needs an admin key" in html
    html = exported(tmp_path, name, "--url", url, "--key", tenant)
    assert "ADMIN_REQUIRED" in html


def test_the_lens_explorer_renders_through_the_service_with_receipts(tmp_path):
    home = tmp_path / "home"
    with Memory.open(home, clock=FixedClock(T0), embedder="hashing") as memory:
        fill_lens_home(memory)
        principal, _ = memory.keys.create(tenant="acme", user="ana", admin=True)
        with ThreadedServer(memory) as server:
            html = exported(tmp_path, "lens_explorer", "--url", server.url, "--key", principal)
    assert "Lens explorer" in html and "Memory service" in html
    assert "p95 latency" in html and "verifies" in html and "does not verify" not in html


def test_the_dreams_review_says_it_reads_the_home_itself(tmp_path, service):
    url, admin, _ = service
    html = exported(tmp_path, "dreams_review", "--url", url, "--key", admin)
    assert "Dreams review reads the home itself" in html and "no Dreams" in html
