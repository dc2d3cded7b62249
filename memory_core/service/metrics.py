"""The service's measurements in the Prometheus text format: requests by op and status, latency
histograms per op, requests in flight; the index's queue and lag are read when scraped."""

from __future__ import annotations

import bisect
import threading
from typing import Mapping

# Seconds. Point ops land in the first few buckets, recall in the middle ones.
BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24)


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: dict[tuple[str, int], int] = {}
        self._latency: dict[str, list[int]] = {}  # per op: counts per bucket, then +Inf
        self._sums: dict[str, float] = {}
        self.in_flight = 0

    def started(self) -> None:
        with self._lock:
            self.in_flight += 1

    def finished(self, op: str, status: int, seconds: float) -> None:
        with self._lock:
            self.in_flight -= 1
            self._requests[(op, status)] = self._requests.get((op, status), 0) + 1
            counts = self._latency.setdefault(op, [0] * (len(BUCKETS) + 1))
            counts[bisect.bisect_left(BUCKETS, seconds)] += 1
            self._sums[op] = self._sums.get(op, 0.0) + seconds

    def render(
        self,
        gauges: Mapping[str, tuple[str, float]],
        counters: Mapping[str, tuple[str, float]] | None = None,
    ) -> str:
        """The exposition text; ``gauges`` and ``counters``: name -> (help, value), values read at
        scrape time by the caller."""
        with self._lock:
            requests = dict(self._requests)
            latency = {op: list(c) for op, c in self._latency.items()}
            sums = dict(self._sums)
            in_flight = self.in_flight
        lines = [
            "# HELP memcore_requests_total Requests answered, by op and HTTP status.",
            "# TYPE memcore_requests_total counter",
        ]
        for (op, status), n in sorted(requests.items()):
            lines.append(f'memcore_requests_total{{op="{op}",status="{status}"}} {n}')
        lines += [
            "# HELP memcore_request_seconds Time from a request's arrival to its answer, by op.",
            "# TYPE memcore_request_seconds histogram",
        ]
        for op, counts in sorted(latency.items()):
            running = 0
            for bound, n in zip((*BUCKETS, float("inf")), counts):
                running += n
                le = "+Inf" if bound == float("inf") else f"{bound:g}"
                lines.append(f'memcore_request_seconds_bucket{{op="{op}",le="{le}"}} {running}')
            lines.append(f'memcore_request_seconds_sum{{op="{op}"}} {sums[op]:.6f}')
            lines.append(f'memcore_request_seconds_count{{op="{op}"}} {running}')
        lines += [
            "# HELP memcore_requests_in_flight Requests being answered now.",
            "# TYPE memcore_requests_in_flight gauge",
            f"memcore_requests_in_flight {in_flight}",
        ]
        for name, (text, value) in gauges.items():
            lines += [f"# HELP {name} {text}", f"# TYPE {name} gauge", f"{name} {value:g}"]
        for name, (text, value) in (counters or {}).items():
            lines += [f"# HELP {name} {text}", f"# TYPE {name} counter", f"{name} {value:g}"]
        return "\n".join(lines) + "\n"
