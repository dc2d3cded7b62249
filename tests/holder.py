"""A real second process holding a memory home open, for tests of what other processes meet.

with held(home) as holder:  # or held(home, "read_only")
    Memory.open(home)        # -> HomeBusy naming holder.pid
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from memory_core import Memory

REPO = Path(__file__).resolve().parents[1]

# The holder opens the home, says so, and keeps it open until its stdin closes.
HOLDER = """
import sys
from memory_core import Memory
with Memory.open(sys.argv[1], read_only=sys.argv[2] == "read_only"):
    print("ready", flush=True)
    sys.stdin.read()
"""


def python_env() -> dict[str, str]:
    """The environment a child Python needs to import this checkout's ``memory_core``."""
    return {**os.environ, "PYTHONPATH": str(REPO)}


def child(args: list[str], *, stdin: bool = False) -> subprocess.Popen[str]:
    """``python args...`` of this checkout, with text pipes (stdin only when asked)."""
    return subprocess.Popen(
        [sys.executable, *args],
        stdin=subprocess.PIPE if stdin else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=python_env(),
    )


@contextmanager
def held(home: Path, mode: str = "writable") -> Iterator[subprocess.Popen[str]]:
    """A second process holding ``home`` open (``writable`` or ``read_only``) while the block runs."""
    proc = child(["-c", HOLDER, str(home), mode], stdin=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.strip() == "ready", proc.stderr.read() if proc.stderr else line
        yield proc
    finally:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def make_home(home: Path) -> Path:
    with Memory.open(home):
        pass
    return home
