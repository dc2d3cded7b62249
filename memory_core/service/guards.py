"""What every request passes before an op runs: its body read within the limit and parsed as a
JSON object, its key checked, its rate within the key's budget. Each refusal is a typed error."""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from starlette.requests import Request

from ..errors import BodyTooLarge, MalformedRequest, RateLimited


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    """How the service guards itself. ``rate_per_s`` 0: no rate limit."""

    max_body_bytes: int = 16 * 1024 * 1024  # a 4M-character document, JSON-escaped, fits
    request_timeout_s: float = 60.0
    rate_per_s: float = 1000.0
    rate_burst: int = 2000
    drain_timeout_s: float = 30.0
    # How often the upkeep thread tends the index (``api.upkeep``); 0: never (searches write
    # the index's queue and settle it themselves, as in-process).
    upkeep_interval_s: float = 0.02
    # Load the index's structures and the columns searches read before the first request
    # (``Memory.prewarm_index``): without it the first few hundred searches read them from disk.
    prewarm_index: bool = True
    # With it, the index's stored vectors too while they take at most this many bytes: a
    # score-fusing recall reads its lexical candidates' vectors, about 3 ms a search from the
    # files at 100,000 rows (docs/benchmarks.md, "Vectors held for the lexical leg"); 0: never.
    resident_vector_bytes: int = 256 * 2**20
    # What ``memcore serve`` does to the process it owns (``service.process``): NumPy's BLAS
    # limited to this many threads (None: left alone), and the survivors of each full garbage
    # collection frozen out of the next one.
    blas_threads: int | None = 1
    freeze_survivors: bool = True
    # How often the delivery worker runs a pass over the change webhooks' outbox; 0: never (a
    # Dagster sensor or ``memcore webhooks deliver`` does it). The lease: how long a worker that
    # died holds the events it was sending.
    webhook_interval_s: float = 1.0
    webhook_lease_s: float = 60.0


async def read_body(request: Request, limit: int) -> dict[str, Any]:
    """The request's JSON object (an empty body is ``{}``), refused over ``limit`` bytes before
    more than that was read."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"the request body is over {limit} bytes", limit=limit)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"the request body is over {limit} bytes", limit=limit)
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise MalformedRequest("the request body is not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise MalformedRequest(f"the request body is not JSON: {exc.msg} at {exc.pos}") from None
    except RecursionError:
        raise MalformedRequest("the request body nests too deep") from None
    if not isinstance(body, dict):
        raise MalformedRequest("the request body must be a JSON object of the op's arguments")
    return body


class RateLimiter:
    """A token bucket per key: ``rate`` requests a second on average, ``burst`` at once."""

    def __init__(self, rate: float, burst: int, now: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self._now = rate, max(1, burst), now
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key_id: str) -> None:
        if self.rate <= 0:
            return
        with self._lock:
            now = self._now()
            tokens, last = self._buckets.get(key_id, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self._buckets[key_id] = (tokens, now)
                retry = max(1, math.ceil((1.0 - tokens) / self.rate))
                raise RateLimited(f"over {self.rate:g} requests a second for this key", retry_after_s=retry)
            self._buckets[key_id] = (tokens - 1.0, now)
