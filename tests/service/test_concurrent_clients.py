"""Everyone at once through one memory service, against ONE home: an agent writing and recalling
through the remote tool, the Dagster maintenance assets through the resource's ``url`` mode and
the fact timeline notebook exported with ``--url``, all overlapping in time, while the service
(a real process) holds the home. Afterwards every write the agent was told was acknowledged is
readable through the service, and on the home once the service has stopped; opening the home
while the service holds it is the typed ``HomeBusy``."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from assets.maintenance import expiry_sweep, index_maintenance, projection_repair, resolver_pass
from assets.resources import EmbedderResource, LLMResource, MemoryHomeResource
from memory_core import Identity, Memory
from memory_core.client import RemoteMemory
from memory_core.errors import HomeBusy
from tests.service.process import ServiceProcess

ROOT = Path(__file__).resolve().parents[2]
MINIMUM_WRITES = 40

# The agent: writes until told to stop (at least MINIMUM_WRITES), recalls every tenth write, and
# records each write the service acknowledged, with when, one JSON line each.
AGENT = """
import json, os, random, sys, time
from pathlib import Path
from memory_core.client import RemoteMemory

url, minimum, acks, stop = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
word = lambda: "".join(random.choice("bdfgklmnprstvz") + random.choice("aeiou") for _ in range(4))
deadline = time.monotonic() + 45
with RemoteMemory(url, os.environ["MEMCORE_AGENT_KEY"], session="agent-run") as remote, acks.open("a") as out:
    tool = remote.tool()
    i = 0
    while i < minimum or (not stop.exists() and time.monotonic() < deadline):
        # Three made-up words: no two values alike (no peer verdicts), and prose, so embedded (a
        # value of hex digits may be typed as an identifier and kept out of the index).
        value = " ".join(word() for _ in range(3))
        done = tool.set(f"fact-{i:04d}", value)
        assert done.verdict == "created", done.verdict
        out.write(json.dumps({"key": done.key, "value": value, "id": done.rows[-1].id, "at": time.time()}) + "\\n")
        out.flush()
        if i % 10 == 0:
            found = tool.recall(value, k=5)
            assert done.key in [h.key for h in found.hits], (done.key, found.verdict)
        i += 1
print(json.dumps({"writes": i}))
"""


def stop(process: subprocess.Popen | None) -> None:
    if process is not None and process.poll() is None:
        process.kill()
        process.wait(timeout=10)


def read_acks(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_an_agent_dagster_and_a_notebook_share_one_home_through_the_service(tmp_path, monkeypatch):
    home = tmp_path / "home"
    with Memory.open(home, embedder="hashing") as memory:  # keys first: the service then holds the home
        admin_key, _ = memory.keys.create(tenant="ops", user="operator", admin=True, label="dagster+notebook")
        agent_key, _ = memory.keys.create(tenant="acme", user="ana", agent="helper", label="agent")
        ana = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        ana.set("city", "Berlin", valid_at="2021-01-01T00:00:00Z")
        ana.set("city", "Paris", valid_at="2023-03-01T00:00:00Z")
        memory.for_run(Identity(tenant="acme", user="bo")).set("otp", "code 4411", ttl_seconds=0.000001)
    acks, stop_file = tmp_path / "acks.jsonl", tmp_path / "stop"
    service = agent = notebook = None
    started = time.monotonic()
    try:
        service = ServiceProcess(home)
        url = service.url
        assert url.startswith("http://127.0.0.1:") and service.pid == service.proc.pid

        # The home is held: a second process gets the typed HomeBusy naming the holder.
        for read_only in (False, True):
            with pytest.raises(HomeBusy) as busy:
                Memory.open(home, read_only=read_only, create=False)
            assert busy.value.details.get("holder_pid") in (service.pid, None)
            assert str(home) in str(busy.value)

        agent = subprocess.Popen(
            [sys.executable, "-c", AGENT, url, str(MINIMUM_WRITES), str(acks), str(stop_file)],
            cwd=ROOT,
            env={**os.environ, "MEMCORE_AGENT_KEY": agent_key},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(lambda: len(read_acks(acks)) >= 5 or agent.poll() is not None, 30, "the agent's first writes")
        assert agent.poll() is None, agent.communicate()

        html = tmp_path / "fact_timeline.html"
        notebook_started = time.time()
        notebook = subprocess.Popen(
            [sys.executable, "-m", "marimo", "export", "html", str(ROOT / "notebooks" / "fact_timeline.py")]
            + ["-o", str(html), "--no-include-code", "--", "--url", url, "--key", admin_key],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

        monkeypatch.setenv("MEMCORE_KEY", admin_key)
        dagster_started = time.time()
        result = dg.materialize(
            [projection_repair, expiry_sweep, index_maintenance, resolver_pass],
            resources={
                "memory_home": MemoryHomeResource(url=url),
                "embedder": EmbedderResource(name="hashing"),
                "llm": LLMResource(),
            },
        )
        dagster_ended = time.time()
        assert result.success
        sweep = result.asset_materializations_for_node("expiry_sweep")[0].metadata
        assert sweep["tombstone"].value == 1
        index = result.asset_materializations_for_node("index_maintenance")[0].metadata
        assert index["rows"].value >= 3

        output, _ = notebook.communicate(timeout=120)
        notebook_ended = time.time()
        assert notebook.returncode == 0, output
        page = html.read_text(encoding="utf-8")
        assert "Fact timeline" in page and "Memory service" in page and "Paris" in page
        assert "vnd.marimo+traceback" not in page

        stop_file.touch()
        out, err = agent.communicate(timeout=60)
        assert agent.returncode == 0, out + err
        written = read_acks(acks)
        assert len(written) >= MINIMUM_WRITES and json.loads(out)["writes"] == len(written)

        # They ran at the same time: the agent was acknowledged while Dagster ran and while the
        # notebook was exported.
        moments = [w["at"] for w in written]
        assert any(dagster_started <= t <= dagster_ended for t in moments), "no write during the Dagster run"
        assert any(notebook_started <= t <= notebook_ended for t in moments), "no write during the notebook"

        # Every acknowledged write reads back through the service.
        with RemoteMemory(url, agent_key) as remote:
            tool = remote.tool()
            for w in written:
                got = tool.get(w["key"])
                assert (got.value, got.id) == (w["value"], w["id"]), w["key"]
        with RemoteMemory(url, admin_key) as remote:
            assert remote.verify_audit().ok and remote.pending_projection_failures() == 0
    finally:
        stop_file.touch()
        stop(agent)
        stop(notebook)
        if service is not None:
            service.stop()  # SIGTERM: drains, writes the index queue, closes the home
    assert service.proc.returncode == 0, service.errors[-3000:]

    # Drained and closed: the home opens again and holds every acknowledged write.
    with Memory.open(home, read_only=True, create=False) as memory:
        tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        assert all(tool.get(w["key"]).value == w["value"] for w in written)
        assert memory.verify_audit().ok
    assert time.monotonic() - started < 60
