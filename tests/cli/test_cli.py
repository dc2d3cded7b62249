"""`memcore`: one JSON document per command, typed errors, nothing changed on error."""

import json
import subprocess
import sys

import pytest

from memory_core import Memory
from memory_core.cli import main
from tests.conftest import store_snapshot


def run(home, *args, identity=("--tenant", "acme", "--user", "ana", "--agent", "helper")):
    out: list[str] = []
    code = main(["--home", str(home), "--embedder", "hashing", *identity, *args, "--json"], out=out.append)
    assert len(out) == 1, out  # exactly one JSON document
    return code, json.loads(out[0])


def test_set_get_history_list_delete_restore_round_trip(home):
    code, doc = run(home, "set", "city", "Berlin", "--valid-at", "2021-01-01T00:00:00Z")
    assert code == 0 and doc["verdict"] == "created" and doc["version"]["value"] == "Berlin"
    code, doc = run(home, "set", "city", "Paris", "--valid-at", "2023-03-01T00:00:00Z", "--type", "residence")
    assert doc["verdict"] == "superseded" and doc["closed"][0]["invalid_at"] == "2023-03-01T00:00:00+00:00"
    _, doc = run(home, "get", "city", "--as-of", "2022-06-01T00:00:00Z")
    assert doc["found"] and doc["fact"]["value"] == "Berlin"
    _, doc = run(home, "get", "city")
    assert doc["fact"]["value"] == "Paris" and doc["fact"]["memory_type"] == "residence"
    _, doc = run(home, "set", "age", "42")
    assert doc["version"]["value"] == 42  # JSON text is parsed
    _, doc = run(home, "set", "zip", "007", "--string")
    assert doc["version"]["value"] == "007"
    _, doc = run(home, "list")
    assert [f["key"] for f in doc["facts"]] == ["age", "city", "zip"] and doc["count"] == 3
    _, doc = run(home, "history", "city")
    assert [v["op"] for v in doc["versions"]] == ["set", "supersede", "set"]
    assert run(home, "delete", "city")[1]["verdict"] == "deleted"
    assert run(home, "get", "city")[1] == {"key": "city", "found": False, "fact": None}
    assert run(home, "restore", "city")[1]["verdict"] == "restored"
    code, doc = run(home, "audit", "verify", identity=())
    assert code == 0 and doc["audit"]["ok"] and doc["audit"]["rows"] == 6


def test_known_at_from_the_cli(home):
    _, first = run(home, "set", "k", "old")
    run(home, "set", "k", "new")
    _, doc = run(home, "get", "k", "--known-at", first["version"]["created_at"])
    assert doc["fact"]["value"] == "old"


@pytest.mark.parametrize(
    "args,code",
    [
        (("set", "k", "v", "--valid-at", "2024-01-01T00:00:00"), "NAIVE_DATETIME"),
        (("set", "k", "v", "--valid-at", "soon"), "MALFORMED_TIMESTAMP"),
        (
            ("set", "k", "v", "--valid-at", "2024-02-01T00:00:00Z", "--invalid-at", "2024-01-01T00:00:00Z"),
            "INVALID_INTERVAL",
        ),
        (("set", "k", "v", "--scope", "team"), "UNKNOWN_SCOPE"),
        (("set", "k", "v", "--scope", "global"), "SCOPE_FORBIDDEN"),
        (("set", "", "v"), "EMPTY_KEY"),
        (("delete", "missing"), "NOT_FOUND"),
        (("restore", "k"), "NOTHING_TO_RESTORE"),
        (("frobnicate",), "USAGE"),
    ],
)
def test_errors_are_one_json_object_exit_non_zero_and_change_nothing(home, args, code):
    run(home, "set", "k", "v")
    with Memory.open(home) as m:
        before = store_snapshot(m)
    exit_code, doc = run(home, *args)
    assert exit_code != 0
    assert doc["error"]["code"] == code and doc["error"]["message"]
    with Memory.open(home) as m:
        assert store_snapshot(m) == before


def test_missing_home_for_a_read_is_an_error(tmp_path):
    code, doc = run(tmp_path / "absent", "get", "k")
    assert code == 1 and doc["error"]["code"] == "HOME_NOT_FOUND"
    assert not (tmp_path / "absent").exists()


def test_missing_tenant_is_an_error(home):
    code, doc = run(home, "get", "k", identity=())
    assert code == 1 and doc["error"]["code"] == "IDENTITY_INCOMPLETE"


def test_console_script_runs_as_a_process(home):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "memory_core.cli",
            "--home",
            str(home),
            "--embedder",
            "none",
            "--tenant",
            "acme",
            "--user",
            "ana",
            "set",
            "k",
            "[1, 2]",
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["version"]["value"] == [1, 2]


def test_a_refused_write_on_a_new_home_leaves_no_trace(tmp_path):
    home = tmp_path / "fresh"
    code, doc = run(home, "set", "k", "v", "--valid-at", "not a date")
    assert code == 1 and doc["error"]["code"] == "MALFORMED_TIMESTAMP"
    assert not home.exists()
    home.mkdir()
    run(home, "set", "", "v")
    assert list(home.iterdir()) == []
