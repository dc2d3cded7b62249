"""What one running service holds: the open home, its guards and measurements, and the ops in
flight (a timed-out op's thread keeps running; shutdown waits for it before closing the home)."""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, Callable, TypeVar

import anyio
from starlette.requests import Request
from starlette.responses import Response

from ..access import ApiKey
from ..api import Memory
from ..errors import MemcoreError, RequestTimeout, ServiceUnavailable
from ..wire import encode, error_body
from .guards import RateLimiter, ServiceSettings
from .metrics import Metrics

T = TypeVar("T")
access_log = logging.getLogger("memory_core.service.access")

SESSION_HEADER = "x-memcore-session"
RUN_HEADER = "x-memcore-run"


def json_response(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return Response(body.encode("utf-8", "surrogatepass"), status, headers, media_type="application/json")


def error_response(exc: MemcoreError) -> Response:
    headers = None
    retry = exc.details.get("retry_after_s") if exc.details else None
    if isinstance(retry, int):
        headers = {"Retry-After": str(retry)}
    return json_response(error_body(exc), exc.status, headers)


def result_response(result: Any, declared: Any = Any) -> Response:
    return json_response({"result": encode(result, declared)})


class ServiceState:
    def __init__(self, memory: Memory, settings: ServiceSettings, *, owns_memory: bool) -> None:
        self.memory = memory
        self.settings = settings
        self.owns_memory = owns_memory
        self.metrics = Metrics()
        self.limiter = RateLimiter(settings.rate_per_s, settings.rate_burst)
        self.draining = False
        self._running = 0
        self._idle = threading.Condition()

    # -- who is calling ------------------------------------------------------------------------

    def authenticate(self, request: Request) -> ApiKey:
        header = request.headers.get("authorization", "")
        scheme, _, presented = header.partition(" ")
        key = self.memory.keys.authenticate(presented.strip() if scheme.lower() == "bearer" else None)
        self.limiter.take(key.key_id)
        return key

    # -- running ops ---------------------------------------------------------------------------

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn`` on a worker thread, answered within the request timeout. A timed-out op keeps
        running (a write may still commit); the caller is told its outcome is unknown."""
        if self.draining:
            raise ServiceUnavailable("the service is shutting down")
        with self._idle:
            self._running += 1

        def job() -> T:
            try:
                return fn()
            finally:
                with self._idle:
                    self._running -= 1
                    self._idle.notify_all()

        try:
            with anyio.fail_after(self.settings.request_timeout_s):
                return await anyio.to_thread.run_sync(job, abandon_on_cancel=True)
        except TimeoutError:
            raise RequestTimeout(
                f"the op ran past the service's {self.settings.request_timeout_s:g} s timeout; "
                "its outcome is unknown (a write may still commit)",
                timeout_s=self.settings.request_timeout_s,
            ) from None

    @property
    def running(self) -> int:
        return self._running

    def drain(self) -> bool:
        """Stop taking ops, wait for the running ones (up to the drain timeout), then write the
        index's queue and close the home if this service opened it. True when none was left."""
        self.draining = True
        deadline = time.monotonic() + self.settings.drain_timeout_s
        with self._idle:
            while self._running and time.monotonic() < deadline:
                self._idle.wait(timeout=max(0.0, deadline - time.monotonic()))
            drained = self._running == 0
        if self.owns_memory:
            self.memory.close()  # flushes the queued index writes first
        else:
            self.memory.flush()
        return drained

    # -- the access log ------------------------------------------------------------------------

    def log_access(self, request: Request, op: str, status: int, seconds: float, key: ApiKey | None) -> None:
        """One structured line per request: who, which op, how it ended and how long it took.
        Never an argument or a value."""
        if not access_log.isEnabledFor(logging.INFO):
            return
        access_log.info(
            json.dumps(
                {
                    "method": request.method,
                    "path": request.url.path,
                    "op": op,
                    "status": status,
                    "ms": round(seconds * 1000, 3),
                    "key_id": key.key_id if key else None,
                    "tenant": key.tenant if key else None,
                    "client": request.client.host if request.client else None,
                }
            )
        )
