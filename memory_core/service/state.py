"""What one running service holds: the open home, its guards and measurements, and the ops in
flight (a timed-out op's thread keeps running; shutdown waits for it before closing the home)."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

import anyio
from starlette.requests import Request
from starlette.responses import Response

from ..access import ApiKey
from ..api import Memory, MemoryTool
from ..api.upkeep import IndexUpkeep
from ..api.webhook_worker import WebhookWorker
from ..errors import MemcoreError, RequestTimeout, ServiceUnavailable
from ..identity import Identity
from ..ports.waiting import WouldWait, without_waiting
from ..wire import encode, error_body
from .guards import RateLimiter, ServiceSettings
from .metrics import Metrics

T = TypeVar("T")
access_log = logging.getLogger("memory_core.service.access")

SESSION_HEADER = "x-memcore-session"
RUN_HEADER = "x-memcore-run"
MODEL_HEADER = "x-memcore-model"
OP_THREADS = 40
# Ops first tried on the event loop (``ServiceState.answer_now``): reads that change nothing and
# are usually answered from memory in a fraction of what a worker thread's round trip costs.
ANSWERED_ON_LOOP = frozenset({"get"})
TOOLS_KEPT = 4096  # request tools kept (``request_tool``): one per key and provenance labels


def json_bytes(payload: Any) -> bytes:
    body = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return body.encode("utf-8", "surrogatepass")


def json_response(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json_bytes(payload), status, headers, media_type="application/json")


def answer(result: Any, declared: Any = Any) -> bytes:
    """An op's answer as the body of its response. Built on the op's worker thread (see
    ``ServiceState.answer``): encoding a recall's hits takes about half a millisecond, which the
    event loop, moving every other request's bytes, should not spend (docs/benchmarks.md)."""
    return json_bytes({"result": encode(result, declared)})


def bytes_response(body: bytes) -> Response:
    return Response(body, 200, media_type="application/json")


def error_response(exc: MemcoreError) -> Response:
    headers = None
    retry = exc.details.get("retry_after_s") if exc.details else None
    if isinstance(retry, int):
        headers = {"Retry-After": str(retry)}
    return json_response(error_body(exc), exc.status, headers)


def _bearer(request: Request) -> str | None:
    scheme, _, presented = request.headers.get("authorization", "").partition(" ")
    return presented.strip() if scheme.lower() == "bearer" else None


class ServiceState:
    def __init__(self, memory: Memory, settings: ServiceSettings, *, owns_memory: bool) -> None:
        self.memory = memory
        self.settings = settings
        self.owns_memory = owns_memory
        self.metrics = Metrics()
        self.limiter = RateLimiter(settings.rate_per_s, settings.rate_burst)
        self.draining = False
        self.upkeep: IndexUpkeep | None = None  # the index upkeep thread, while the app serves
        self.webhooks: WebhookWorker | None = None  # the webhook delivery thread, while it serves
        self._running = 0
        self._idle = threading.Condition()
        self._tools: dict[tuple[str | None, ...], MemoryTool] = {}
        self.loop_answers = 0  # ops answered on the event loop (``answer_now``), and those that
        self.loop_fallbacks = 0  # would have waited there and ran on a worker thread instead
        # The ops' threads (as many as anyio's default limit).
        self._workers = ThreadPoolExecutor(max_workers=OP_THREADS, thread_name_prefix="memcore-op")

    # -- who is calling ------------------------------------------------------------------------

    async def authenticate(self, request: Request) -> ApiKey:
        """The key a request presents, if it stands (else ``Unauthenticated``), within its rate.
        Asked from the event loop, so a key not cached yet is read on a worker thread: the read
        may wait behind a write holding the store's lock."""
        presented = _bearer(request)
        key = self.memory.keys.cached(presented)
        if key is None:
            key = await anyio.to_thread.run_sync(self.memory.keys.authenticate, presented)
        self.limiter.take(key.key_id)
        return key

    def tool(self, identity: Identity, *, origin: str) -> MemoryTool:
        """The Memory tool of one request's identity (built here rather than by ``Memory.for_run``,
        which a test may route to a remote tool: the service itself always runs in-process)."""
        return MemoryTool(self.memory, identity, origin)

    def request_tool(self, key: ApiKey, request: Request, *, origin: str = "memcore.service") -> MemoryTool:
        """The Memory tool of a request: its key's identity, labelled with the request's session,
        run and model headers. Kept per key and labels (a tool holds its identity and nothing
        else), so a key's next request builds none; the key itself is checked on every request."""
        headers = request.headers
        labels = (key.key_id, headers.get(SESSION_HEADER), headers.get(RUN_HEADER), headers.get(MODEL_HEADER), origin)
        tool = self._tools.get(labels)
        if tool is None:
            if len(self._tools) >= TOOLS_KEPT:
                self._tools.clear()
            identity = key.identity(session=labels[1], run=labels[2], model=labels[3])
            tool = self._tools[labels] = self.tool(identity, origin=origin)
        return tool

    # -- running ops ---------------------------------------------------------------------------

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn`` on a worker thread, answered within the request timeout. A timed-out op keeps
        running (a write may still commit) and the caller is told its outcome is unknown; one
        that never reached a thread never runs, and the caller is told so.

        The threads are a plain pool handed work with asyncio's own hop: anyio's (which this
        used before) yields to the event loop twice and enters two cancel scopes on the way,
        about a third of the event loop's time for a get (docs/benchmarks.md)."""
        if self.draining:
            raise ServiceUnavailable("the service is shutting down")
        started, abandoned = False, False
        with self._idle:
            self._running += 1

        def job() -> T:
            nonlocal started
            with self._idle:
                if abandoned:
                    raise RequestTimeout("the op was abandoned before it started")
                started = True
            try:
                return fn()
            finally:
                self._finished()

        try:
            future = asyncio.get_running_loop().run_in_executor(self._workers, job)
        except RuntimeError:  # the pool was shut down: the service is stopping
            self._finished()
            raise ServiceUnavailable("the service is shutting down") from None
        try:
            async with asyncio.timeout(self.settings.request_timeout_s):
                return await future
        except BaseException as exc:  # a timeout, or the request was cancelled
            with self._idle:
                never_ran = not started
                abandoned = never_ran
            if never_ran:
                self._finished()
            if not isinstance(exc, TimeoutError):
                raise
            if never_ran:
                raise RequestTimeout(
                    f"the service was too busy to start the op within {self.settings.request_timeout_s:g} s; "
                    "nothing ran",
                    timeout_s=self.settings.request_timeout_s,
                    started=False,
                ) from None
            raise RequestTimeout(
                f"the op ran past the service's {self.settings.request_timeout_s:g} s timeout; "
                "its outcome is unknown (a write may still commit)",
                timeout_s=self.settings.request_timeout_s,
                started=True,
            ) from None

    async def answer(self, fn: Callable[[], Any], declared: Any = Any) -> Response:
        """``fn``'s result as a response, encoded on the same worker thread that ran it."""
        return bytes_response(await self.run(lambda: answer(fn(), declared)))

    def answer_now(self, fn: Callable[[], Any], declared: Any = Any) -> Response | None:
        """``fn``'s result as a response, computed here on the event loop, when nothing in it has
        to wait: a get of a namespace held in memory. None when something would (a lock another
        thread holds, a statement to the store) or the service is draining: the caller then runs
        it on a worker thread (``answer``). Only for ops that change nothing, so one stopped part
        way leaves nothing behind. A worker thread's hop there and back cost a get more than the
        get itself (docs/benchmarks.md, "A get answered on the event loop")."""
        if self.draining:
            return None
        try:
            with without_waiting():
                body = answer(fn(), declared)
        except WouldWait:
            self.loop_fallbacks += 1
            return None
        self.loop_answers += 1
        return bytes_response(body)

    def _finished(self) -> None:
        with self._idle:
            self._running -= 1
            self._idle.notify_all()

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
        self._workers.shutdown(wait=False, cancel_futures=True)  # an op still running finishes on its own
        if self.owns_memory:
            self.memory.close()  # flushes the queued index writes first
        elif not self.memory.closed:
            self.memory.flush()
        return drained

    # -- the access log ------------------------------------------------------------------------

    @property
    def logs_access(self) -> bool:
        return access_log.isEnabledFor(logging.INFO)

    def log_access(self, request: Request, op: str, status: int, seconds: float, key: ApiKey | None) -> None:
        """One structured line per request: who, which op, how it ended and how long it took.
        Never an argument or a value."""
        if not self.logs_access:
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
