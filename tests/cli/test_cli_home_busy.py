"""`memcore` on a home another process holds: one JSON error document (HOME_BUSY), a non-zero
exit, no traceback. The holder is a real second process."""

from __future__ import annotations

import json
import subprocess
import sys

from memory_core.cli import main
from memory_core.cli.registry import EXIT_ERROR
from tests.holder import REPO, held, make_home, python_env

IDENTITY = ("--tenant", "acme", "--user", "ana", "--agent", "helper")


def test_a_held_home_is_a_json_error_from_main(home):
    make_home(home)
    with held(home) as holder:
        for args in (("get", "city"), ("set", "city", "Berlin")):
            out: list[str] = []
            code = main(["--home", str(home), "--embedder", "none", *IDENTITY, *args, "--json"], out=out.append)
            assert code == EXIT_ERROR and len(out) == 1
            error = json.loads(out[0])["error"]
            assert (error["code"], error["status"]) == ("HOME_BUSY", 423)
            assert error["details"]["holder_pid"] == holder.pid
    assert (home / "memory.duckdb").exists()  # a refused write never removes a store it did not make


def test_the_memcore_command_prints_the_error_without_a_traceback(home):
    make_home(home)
    env = python_env()
    command = [sys.executable, "-m", "memory_core.cli", "--home", str(home), "--embedder", "none", *IDENTITY, "get"]
    with held(home):
        as_json = subprocess.run([*command, "city", "--json"], capture_output=True, text=True, cwd=REPO, env=env)
        as_text = subprocess.run([*command, "city"], capture_output=True, text=True, cwd=REPO, env=env)
    assert as_json.returncode == EXIT_ERROR and "Traceback" not in as_json.stderr
    assert json.loads(as_json.stdout)["error"]["code"] == "HOME_BUSY"
    assert as_text.returncode == EXIT_ERROR and "Traceback" not in as_text.stderr
    assert as_text.stderr.startswith("memcore: error [HOME_BUSY]: memory home") and as_text.stdout == ""
