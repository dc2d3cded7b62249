"""The benchmark client's pace: with a rate, ops arrive as a Poisson process and each is timed
from when it was due, so a client that falls behind charges its backlog to the ops that waited
(no coordinated omission); without one, the loop runs back to back."""

from __future__ import annotations

import time
from types import SimpleNamespace

from evals.service_load.loop import client_loop, client_plan, parse_mix


class SlowTool:
    """A tool whose every op takes ``cost`` seconds."""

    def __init__(self, cost: float) -> None:
        self.cost = cost

    def _wait(self) -> None:
        time.sleep(self.cost)

    def set(self, key, value):
        self._wait()
        return SimpleNamespace(verdict="created", version=None)

    def get(self, key):
        self._wait()
        return None

    def recall(self, query, k):
        self._wait()
        return SimpleNamespace(hits=[1])


def plan(rate: float) -> dict:
    return client_plan(0, 1, [100], "pace", parse_mix("get=50,set=25,recall=25"), seed=3, rate=rate)


def ops(result: dict) -> int:
    return sum(len(v) for v in result["latency_ms"].values())


def test_a_paced_client_sends_about_its_rate():
    result = client_loop(SlowTool(0.0), plan(rate=40.0), seconds=2.0)
    assert 40 <= ops(result) <= 130  # 80 expected; Poisson, so a wide band
    assert not result["errors"]


def test_a_client_that_falls_behind_charges_the_wait_to_its_ops():
    # 50 ops/s asked of a tool that answers 20 a second: the backlog grows, and so do the latencies.
    result = client_loop(SlowTool(0.05), plan(rate=50.0), seconds=1.5)
    latencies = sorted(v for values in result["latency_ms"].values() for v in values)
    assert latencies[-1] > 300  # the last ones waited for the backlog, far beyond the 50 ms of work
    assert ops(result) < 50


def test_without_a_rate_the_loop_runs_back_to_back():
    result = client_loop(SlowTool(0.01), plan(rate=0.0), seconds=1.0)
    latencies = [v for values in result["latency_ms"].values() for v in values]
    assert 40 <= ops(result) <= 100 and max(latencies) < 200
