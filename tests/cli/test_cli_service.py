"""`memcore` and the memory service: API keys on a home, `memcore serve` as a real process, the
verbs through it with `--url` / `--key` (the same JSON as on a home), the refusals that go with a
URL, a served home's HOME_BUSY for everyone else, and a clean stop on SIGTERM or SIGINT."""

from __future__ import annotations

import json
import selectors
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

from memory_core.cli import VERBS, main
from memory_core.cli.registry import EXIT_ERROR, EXIT_USAGE, Verb
from tests.holder import child

pytest.importorskip("uvicorn", reason="the service extra is not installed")

IDENTITY = ("--tenant", "acme", "--user", "ana", "--agent", "helper")
MARCH = "2024-03-01T00:00:00Z"


def run(*argv: str, home: Path | None = None) -> tuple[int, Any]:
    out: list[str] = []
    code = main([*(("--home", str(home)) if home else ()), "--embedder", "hashing", *argv, "--json"], out=out.append)
    assert len(out) == 1, out  # exactly one JSON document
    return code, json.loads(out[0])


def remote(service: dict[str, Any], *argv: str, key: str = "user") -> tuple[int, Any]:
    out: list[str] = []
    code = main(["--url", service["url"], "--key", service[key], *argv, "--json"], out=out.append)
    assert len(out) == 1, out
    return code, json.loads(out[0])


def shape(doc: Any) -> Any:
    """A document's structure: its names, recursively (values aside)."""
    if isinstance(doc, dict):
        return {k: shape(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [shape(v) for v in doc[:1]]
    return None


@contextmanager
def served(home: Path, *extra: str) -> Iterator[tuple[subprocess.Popen[str], dict[str, Any]]]:
    """`memcore serve --port 0` on ``home`` as a real process, and its announcement. Killed on the
    way out if it is still running."""
    proc = child(
        ["-m", "memory_core.cli", "--home", str(home), "--embedder", "hashing"]
        + ["serve", "--port", "0", "--no-access-log", "--drain-timeout", "5", *extra]
    )
    try:
        with selectors.DefaultSelector() as wait:
            wait.register(proc.stdout, selectors.EVENT_READ)
            ready = wait.select(timeout=60)
        line = proc.stdout.readline() if ready else ""
        if not line:
            proc.kill()
            raise AssertionError(f"memcore serve did not announce itself: {proc.communicate()[1][-2000:]}")
        yield proc, json.loads(line)  # it answers requests, and handles signals, once it says so
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


def make_key(home: Path, *options: str) -> str:
    code, doc = run("keys", "create", *options, home=home)
    assert code == 0, doc
    return doc["key"]


@pytest.fixture(scope="module")
def service(tmp_path_factory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("served") / "home"
    keys = {
        "user": make_key(home, "--tenant", "acme", "--user", "ana", "--agent", "helper"),
        "admin": make_key(home, "--tenant", "acme", "--user", "ops", "--admin"),
    }
    with served(home) as (proc, where):
        yield {**where, **keys, "home_path": home, "proc": proc}


# -- keys on a home ------------------------------------------------------------------------------


def test_keys_create_list_revoke_on_a_home(home):
    code, made = run("keys", "create", "--tenant", "acme", "--user", "ana", "--label", "laptop", home=home)
    assert code == 0 and made["key"].startswith(f"mck_{made['key_id']}_")
    assert {k: made[k] for k in ("tenant", "user", "agent", "admin", "label", "expires_at", "state")} == {
        "tenant": "acme",
        "user": "ana",
        "agent": None,
        "admin": False,
        "label": "laptop",
        "expires_at": None,
        "state": "active",
    }
    assert made["memory_scopes"] == ["agent", "tenant", "user"]
    # The run identity options before the verb name the key too (on a home).
    code, ops = run(
        "--tenant", "beta", "--user", "ops", "--admin", "keys", "create", "--memory-scopes", "user,tenant",
        "--expires", "2999-01-01T00:00:00Z", home=home,
    )  # fmt: skip
    assert code == 0 and (ops["tenant"], ops["user"], ops["admin"]) == ("beta", "ops", True)
    assert ops["memory_scopes"] == ["tenant", "user"] and ops["expires_at"].startswith("2999-01-01")

    code, listed = run("keys", "list", home=home)
    assert code == 0 and listed["count"] == 2
    text = json.dumps(listed)
    assert made["key"] not in text and made["key"].split("_", 2)[2] not in text  # the secret is shown once
    assert all("key" not in k and "secret_sha256" not in k for k in listed["keys"])
    assert [k["key_id"] for k in run("keys", "list", "--tenant", "beta", home=home)[1]["keys"]] == [ops["key_id"]]

    # --tenant on revoke: only a key of that tenant; another's is NOT_FOUND, as an unknown one.
    code, refused = run("keys", "revoke", made["key_id"], "--tenant", "beta", home=home)
    assert code == EXIT_ERROR and refused["error"]["code"] == "NOT_FOUND"
    code, revoked = run("keys", "revoke", made["key_id"], home=home)
    assert code == 0 and revoked["state"] == "revoked" and revoked["revoked_at"] and "key" not in revoked
    states = {k["key_id"]: k["state"] for k in run("keys", "list", home=home)[1]["keys"]}
    assert states == {made["key_id"]: "revoked", ops["key_id"]: "active"}


@pytest.mark.parametrize(
    "argv,code",
    [
        (("keys", "create", "--user", "ana"), "IDENTITY_INCOMPLETE"),
        (("keys", "create", "--tenant", "acme", "--expires", "2024-01-01T00:00:00"), "NAIVE_DATETIME"),
        (("keys", "create", "--tenant", "acme", "--expires", "2000-01-01T00:00:00Z"), "INVALID_INPUT"),
        (("keys", "create", "--tenant", "acme", "--memory-scopes", "team"), "UNKNOWN_SCOPE"),
        (("keys", "create", "--tenant", "acme", "0123456789abcdef"), "USAGE"),
        (("keys", "list", "--label", "x"), "USAGE"),
        (("keys", "revoke"), "USAGE"),
        (("keys", "revoke", "not-a-key-id"), "NOT_FOUND"),
        (("keys", "rotate"), "USAGE"),
    ],
)
def test_keys_refusals_are_typed_and_write_nothing(home, argv, code):
    run("keys", "list", home=home)  # a list on a missing home does not make one
    assert not home.exists()
    make_key(home, "--tenant", "acme")
    exit_code, doc = run(*argv, home=home)
    assert exit_code != 0 and doc["error"]["code"] == code, doc
    assert run("keys", "list", home=home)[1]["count"] == 1


# -- the service: verbs through --url ------------------------------------------------------------


def test_serve_announces_one_json_line(service):
    assert service["url"].startswith("http://127.0.0.1:") and service["pid"] == service["proc"].pid
    assert service["home"] == str(service["home_path"].resolve())


def test_verbs_through_the_service_answer_what_they_answer_on_a_home(service, tmp_path):
    local = tmp_path / "local"
    steps = [
        ("set", "city", "Berlin", "--valid-at", MARCH),
        ("set", "city", "Paris", "--valid-at", "2024-09-01T00:00:00Z"),
        ("set", "pet", "a cat named Miso"),
        ("get", "city", "--as-of", "2024-05-01T00:00:00Z"),
        ("get", "nothing-here"),
        ("list",),
        ("history", "city"),
        ("recall", "where does ana live", "--k", "3"),
        ("search", "cat", "--k", "2"),
        ("delete", "pet"),
    ]
    for step in steps:
        code, there = remote(service, *step)
        here_code, here = run(*IDENTITY, *step, home=local)
        assert code == here_code == 0, (step, there, here)
        assert shape(there) == shape(here), step
    assert remote(service, "get", "city")[1]["fact"]["value"] == "Paris"
    assert remote(service, "get", "city", "--as-of", "2024-05-01T00:00:00Z")[1]["fact"]["value"] == "Berlin"
    versions = remote(service, "history", "city")[1]["versions"]
    assert [v["op"] for v in versions] == ["set", "supersede", "set"]
    assert versions[-1]["provenance"]["actor"] == "agent:helper"  # the key's identity
    hits = remote(service, "recall", "Paris", "--k", "3")[1]["hits"]
    assert hits and hits[0]["key"] == "city"


def test_session_run_and_model_go_along_as_the_provenance_of_writes(service):
    _, doc = remote(service, "--session", "s9", "--run", "r9", "--model", "m9", "set", "mood", "calm")
    provenance = doc["version"]["provenance"]
    assert (provenance["session"], provenance["run"], provenance["model"]) == ("s9", "r9", "m9")


def test_the_home_verbs_run_through_the_service_with_an_admin_key(service, tmp_path):
    code, refused = remote(service, "audit", "verify")
    assert code == EXIT_ERROR and refused["error"]["code"] == "ADMIN_REQUIRED"
    code, doc = remote(service, "audit", "verify", key="admin")
    assert code == 0 and doc["audit"]["ok"] and doc["url"] == service["url"]
    run(*IDENTITY, "set", "k", "v", home=tmp_path / "h")
    local_code, local = run("audit", "verify", home=tmp_path / "h")
    assert local_code == 0 and set(local) == {"audit", "home"}
    assert shape(doc["audit"]) == shape(local["audit"])
    for argv in (("index", "status"), ("sweep-expired",), ("resolve",), ("work-queue",)):
        code, doc = remote(service, *argv, key="admin")
        assert code == 0 and isinstance(doc, dict), (argv, doc)
    code, refused = remote(service, "work-queue", "--worker", "w1", key="admin")
    assert code == EXIT_USAGE and refused["error"]["code"] == "USAGE"


def test_keys_through_the_service(service):
    code, made = remote(service, "keys", "create", "--tenant", "acme", "--user", "bo", key="admin")
    assert code == 0 and made["key"].startswith("mck_") and made["state"] == "active"
    code, listed = remote(service, "keys", "list", "--tenant", "acme", key="admin")
    assert made["key_id"] in {k["key_id"] for k in listed["keys"]} and made["key"] not in json.dumps(listed)
    out: list[str] = []
    assert main(["--url", service["url"], "--key", made["key"], "set", "k", "v", "--json"], out=out.append) == 0
    code, revoked = remote(service, "keys", "revoke", made["key_id"], key="admin")
    assert code == 0 and revoked["state"] == "revoked"
    out.clear()
    assert main(["--url", service["url"], "--key", made["key"], "get", "k", "--json"], out=out.append) == EXIT_ERROR
    assert json.loads(out[0])["error"]["code"] == "UNAUTHENTICATED"
    code, refused = remote(service, "keys", "list")  # not an admin key
    assert code == EXIT_ERROR and refused["error"]["code"] == "ADMIN_REQUIRED"


def test_the_url_and_key_come_from_the_environment_too(service, monkeypatch):
    monkeypatch.setenv("MEMCORE_URL", service["url"])
    monkeypatch.setenv("MEMCORE_KEY", service["user"])
    out: list[str] = []
    assert main(["set", "tea", "green", "--json"], out=out.append) == 0
    assert json.loads(out[0])["version"]["value"] == "green"


@pytest.mark.parametrize(
    "flags",
    [("--tenant", "acme"), ("--user", "ana"), ("--agent", "helper"), ("--admin",), ("--tenant", "x", "--user", "y")],
)
def test_identity_options_with_a_url_are_refused(service, flags):
    # Its own fact, whatever ran before it on this worker (the service is the module's).
    assert remote(service, "set", "city", "Lisbon")[0] == 0
    for argv in (("get", "city"), ("set", "city", "Oslo"), ("keys", "list")):
        code, doc = remote(service, *flags, *argv, key="admin")
        assert code == EXIT_ERROR and doc["error"]["code"] == "IDENTITY_IN_REQUEST", doc
        assert "API key alone" in doc["error"]["message"]
    assert remote(service, "get", "city")[1]["fact"]["value"] == "Lisbon"


def test_what_a_url_cannot_go_with(service, monkeypatch, tmp_path):
    code, doc = remote(service, "--home", str(tmp_path), "get", "city")
    assert code == EXIT_USAGE and "--home" in doc["error"]["message"]
    code, doc = remote(service, "--embedder", "hashing", "get", "city")
    assert code == EXIT_USAGE and "--embedder" in doc["error"]["message"]
    out: list[str] = []
    assert main(["--url", service["url"], "get", "city", "--json"], out=out.append) == EXIT_ERROR
    assert json.loads(out[0])["error"]["code"] == "UNAUTHENTICATED" and "--key" in out[0]
    code, doc = remote(service, "serve", "--port", "0", key="admin")
    assert code == EXIT_USAGE and doc["error"]["code"] == "USAGE"
    # A verb of the home itself that has no counterpart through a service is refused, typed.
    monkeypatch.setitem(
        VERBS, "home-only", Verb("home-only", "needs the home", lambda call: ({}, "", 0), scope=False, identity=False)
    )
    code, doc = remote(service, "home-only", key="admin")
    assert code == EXIT_ERROR and doc["error"]["code"] == "HOME_REQUIRED"
    # An explicit --home beats $MEMCORE_URL: the home is opened.
    monkeypatch.setenv("MEMCORE_URL", service["url"])
    code, doc = run(*IDENTITY, "set", "k", "local", home=tmp_path / "own")
    assert code == 0 and doc["version"]["provenance"]["origin"] == "memcore.cli"


def test_a_served_home_is_busy_for_every_other_process_with_the_url_hint(service):
    home, pid = service["home_path"], service["pid"]
    for argv in ((*IDENTITY, "get", "city"), ("audit", "verify"), ("keys", "list"), ("serve", "--port", "0")):
        code, doc = run(*argv, home=home)
        error = doc["error"]
        assert code == EXIT_ERROR and (error["code"], error["status"]) == ("HOME_BUSY", 423), argv
        assert error["details"]["holder_pid"] == pid and f"PID {pid}" in error["message"]
        assert "--url" in error["message"]
    assert service["proc"].poll() is None  # the service is untouched


# -- mcp -----------------------------------------------------------------------------------------


def test_mcp_takes_a_service_and_hands_the_remote_tool_over(service, monkeypatch):
    out: list[str] = []
    assert main(["mcp", "--json"], out=out.append) == EXIT_USAGE and "--url" in out[-1]
    code = main(
        ["--tenant", "acme", "mcp", "--url", service["url"], "--key", service["user"], "--json"], out=out.append
    )
    assert code == EXIT_ERROR and json.loads(out[-1])["error"]["code"] == "IDENTITY_IN_REQUEST"
    bad = "mck_0123456789abcdef_" + "a" * 43
    assert main(["mcp", "--url", service["url"], "--key", bad, "--json"], out=out.append) == EXIT_ERROR
    assert json.loads(out[-1])["error"]["code"] == "UNAUTHENTICATED"  # refused before stdio starts

    import memory_core.mcp_server

    got: list[Any] = []

    def run_stdio(tool_source):  # stands in for the MCP server: what does memcore hand it?
        tool = tool_source()
        got.append((tool.identity.tenant, tool.identity.user, tool.get("city")))

    monkeypatch.setattr(memory_core.mcp_server, "run_stdio", run_stdio, raising=False)
    out.clear()
    assert main(["mcp", "--url", service["url"], "--key", service["user"]], out=out.append) == 0
    assert out == []  # stdout belongs to the protocol
    assert got and got[0][:2] == ("acme", "ana")


# -- stopping ------------------------------------------------------------------------------------


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_service_cleanly(tmp_path, stop):
    home = tmp_path / "home"
    key = make_key(home, "--tenant", "acme", "--user", "ana")
    with served(home) as (proc, where):
        if stop == signal.SIGTERM:  # a write through the service, to find on the home afterwards
            out: list[str] = []
            assert main(["--url", where["url"], "--key", key, "set", "city", "Lisbon", "--json"], out=out.append) == 0
        started = time.monotonic()
        proc.send_signal(stop)
        assert proc.wait(timeout=15) == 0
        assert time.monotonic() - started < 10
        rest, err = proc.stdout.read(), proc.stderr.read()
    assert rest == "" and "Traceback" not in err  # the announcement was the one document
    code, doc = run(*IDENTITY[:4], "get", "city", home=home)  # the home is free again
    assert code == 0 and doc["found"] == (stop == signal.SIGTERM)


def test_memcore_mcp_speaks_mcp_on_stdio_and_nothing_else(service):
    pytest.importorskip("memory_core.mcp_server", reason="the MCP server needs the service extra")
    proc = child(["-m", "memory_core.cli", "mcp", "--url", service["url"], "--key", service["user"]], stdin=True)
    try:

        def ask(message: dict[str, Any]) -> dict[str, Any] | None:
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            proc.stdin.flush()
            return json.loads(proc.stdout.readline()) if "id" in message else None

        hello = {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
        assert "result" in ask({"id": 1, "method": "initialize", "params": hello})
        ask({"method": "notifications/initialized"})
        tools = {t["name"] for t in ask({"id": 2, "method": "tools/list"})["result"]["tools"]}
        assert "memory_get" in tools
        proc.stdin.close()
        assert proc.wait(timeout=15) == 0 and proc.stdout.read() == ""  # nothing but the protocol
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            stream.close()
