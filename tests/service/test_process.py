"""What ``memcore serve`` does to the process it owns (``memory_core.service.process``): NumPy's
BLAS held to one thread, and the survivors of each full collection frozen. Process-wide state,
so each check runs in a Python of its own, never in the test runner's."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("threadpoolctl", reason="the service extra (threadpoolctl) is not installed")

CHILD = """
import gc, json
import numpy as np
from threadpoolctl import threadpool_info
from memory_core.service.process import stop_freezing, tune_process

before = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
tuning = tune_process(**json.loads(__import__("sys").argv[1]))
after = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
frozen_at_start = gc.get_freeze_count()
kept = [{"row": n, "cols": [n]} for n in range(20_000)]  # long-lived, made after the tuning
gc.collect()
frozen_after_full = gc.get_freeze_count()
garbage = []
garbage.append(garbage)  # a cycle made after the freeze is still collected
del garbage
collected = gc.collect()
stop_freezing()
print(json.dumps({
    "before": before, "after": after, "libraries": list(tuning.blas_libraries),
    "threads": tuning.blas_threads, "freezes": tuning.freezes_survivors,
    "frozen_at_start": frozen_at_start, "frozen_after_full": frozen_after_full,
    "collected": collected, "frozen_after_stop": gc.get_freeze_count(),
    "callbacks": len(gc.callbacks),
}))
"""


def _child(**tuning) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(tuning)], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_service_process_keeps_blas_to_one_thread_and_freezes_what_survives():
    seen = _child()
    assert seen["libraries"] and seen["threads"] == 1 and seen["freezes"] is True
    assert seen["after"] and all(n == 1 for n in seen["after"])
    # What was alive at the tuning is frozen at once; what outlives a later full collection too.
    assert seen["frozen_at_start"] > 1000
    assert seen["frozen_after_full"] >= seen["frozen_at_start"] + 20_000
    assert seen["collected"] >= 1  # a cycle formed after a freeze is not frozen with it
    assert seen["frozen_after_stop"] == 0 and seen["callbacks"] == 0


def test_each_part_of_the_tuning_can_be_left_out():
    seen = _child(blas_threads=None, freeze=False)
    assert seen["libraries"] == [] and seen["threads"] is None and seen["freezes"] is False
    assert seen["after"] == seen["before"]
    assert seen["frozen_at_start"] == 0 and seen["frozen_after_full"] == 0


UNDONE = """
import gc, json
import numpy as np
from threadpoolctl import threadpool_info
from memory_core.service.process import tuned_process

def blas():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

before = blas()
with tuned_process() as tuning:
    inside = (blas(), gc.get_freeze_count() > 0, len(gc.callbacks))
print(json.dumps({"before": before, "inside": inside, "after": blas(), "frozen": gc.get_freeze_count(),
                  "callbacks": len(gc.callbacks), "threads": tuning.blas_threads}))
"""


def test_a_process_tuned_for_a_while_is_left_as_it_was():
    """``tuned_process``: what a benchmark uses inside a process that goes on (a test runner)."""
    done = subprocess.run([sys.executable, "-c", UNDONE], capture_output=True, text=True, timeout=120, check=True)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["threads"] == 1 and seen["inside"][0] and all(n == 1 for n in seen["inside"][0])
    assert seen["inside"][1:] == [True, 1]
    assert seen["after"] == seen["before"] and seen["frozen"] == 0 and seen["callbacks"] == 0


@pytest.mark.parametrize(
    ("flags", "expected"),
    [((), (1, True)), (("--blas-threads", "0", "--no-gc-freeze"), (None, False)), (("--blas-threads", "4"), (4, True))],
)
def test_memcore_serve_passes_the_process_tuning_to_the_service(monkeypatch, tmp_path, flags, expected):
    import memory_core.service
    from memory_core.cli import main

    seen = []

    def serve_once(home, *, settings, announce, **rest):
        seen.append(settings)
        announce({"url": "http://127.0.0.1:0", "pid": 0, "home": str(home)})

    monkeypatch.setattr(memory_core.service, "serve", serve_once)
    out: list[str] = []
    argv = ["--home", str(tmp_path / "home"), "--embedder", "hashing", "serve", "--port", "0", *flags, "--json"]
    assert main(argv, out=out.append) == 0, out
    assert (seen[0].blas_threads, seen[0].freeze_survivors) == expected


def test_memcore_serve_refuses_a_negative_thread_count(tmp_path):
    from memory_core.cli import main

    out: list[str] = []
    argv = ["--home", str(tmp_path / "home"), "--embedder", "hashing", "serve", "--blas-threads", "-1", "--json"]
    assert main(argv, out=out.append) != 0
    assert json.loads(out[-1])["error"]["code"] == "INVALID_INPUT"
    assert not (tmp_path / "home").exists()
