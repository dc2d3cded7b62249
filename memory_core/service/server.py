"""Run the service: open the home (a held home is ``HomeBusy``, naming its holder), listen on
``host:port`` (port 0: a free one), say where in one JSON line on stdout, and serve until SIGTERM
or SIGINT. Stopping drains: no new connections, the requests in flight are answered, the ops
still running finish, the index's queued writes are written, the home is closed."""

from __future__ import annotations

import json
import logging
import socket
import sys
from pathlib import Path
from typing import Any, Callable

import uvicorn

from ..api import Memory
from .app import create_app
from .guards import ServiceSettings
from .process import tune_process


def bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def configure_access_log(enabled: bool) -> None:
    log = logging.getLogger("memory_core.service.access")
    log.propagate = False
    log.handlers.clear()
    if enabled:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    else:
        log.setLevel(logging.WARNING)


def warm(memory: Memory, *, prewarm_index: bool = True, vector_budget_bytes: int = 0) -> None:
    """Load the embedder's model and open the index (catching up with the store) before the first
    request: a static model distilled on first use takes minutes, longer than a request may. With
    ``prewarm_index``, the index's structures and columns too, and its vectors within
    ``vector_budget_bytes`` (``Memory.prewarm_index``)."""
    if memory.embedder is not None:
        memory.embedder.embed(["warm up"])
        memory.flush()
        if prewarm_index:
            memory.prewarm_index(vector_budget_bytes=vector_budget_bytes)


def serve(
    home: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    settings: ServiceSettings | None = None,
    embedder: Any = "static",
    access_log: bool = True,
    announce: Callable[[dict[str, Any]], None] | None = None,
    **embedder_options: Any,
) -> None:
    """Serve the home at ``home`` until stopped. ``announce`` gets ``{"url", "pid", "home"}`` once
    the socket listens (default: one JSON line on stdout)."""
    import os

    settings = settings or ServiceSettings()
    memory = Memory.open(home, embedder=embedder, **embedder_options)
    try:
        warm(memory, prewarm_index=settings.prewarm_index, vector_budget_bytes=settings.resident_vector_bytes)
        # After the warm-up: what it loaded is frozen at once, so no request waits on a
        # collection walking the start-up heap (docs/service.md, "The process").
        tune_process(blas_threads=settings.blas_threads, freeze=settings.freeze_survivors)
        sock = bind(host, port)
    except BaseException:
        memory.close()
        raise
    configure_access_log(access_log)
    app = create_app(memory, settings, owns_memory=True)
    actual = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    where = {"url": f"http://{shown}:{actual}", "pid": os.getpid(), "home": str(Path(home).resolve())}
    (announce or (lambda doc: print(json.dumps(doc), flush=True)))(where)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=int(max(1, settings.drain_timeout_s)),
        timeout_keep_alive=30,
    )
    run_until_stopped(uvicorn.Server(config), sock)


def run_until_stopped(server: uvicorn.Server, sock: socket.socket) -> None:
    """Serve until SIGTERM or SIGINT, then return. uvicorn (0.29 and later) raises the signal it
    stopped on again once it has shut down, for the handler it found; left at the default, that
    would end a drained, closed service with -15 instead of 0."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():  # signals are the main thread's
        server.run(sockets=[sock])
        return

    def asked_to_stop(signum: int, frame: Any) -> None:
        # Reached before uvicorn installs its handlers (a stop while starting: it then stops as
        # soon as it runs) and after it restores ours (its shutdown is done): stopping either way.
        server.should_exit = True

    previous = {sig: signal.signal(sig, asked_to_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class ThreadedServer:
    """The service over an open ``memory`` on a thread of this process, on a free port of
    127.0.0.1: for tests, benchmarks and notebooks that need a real server beside their own code.

        with ThreadedServer(memory) as server:
            RemoteMemory(server.url, key).tool().get("k")
    """

    def __init__(self, memory: Memory, settings: ServiceSettings | None = None, *, host: str = "127.0.0.1") -> None:
        self.app = create_app(memory, settings, owns_memory=False)
        self._sock = bind(host, 0)
        self.url = f"http://{host}:{self._sock.getsockname()[1]}"
        config = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread: Any = None

    def start(self) -> "ThreadedServer":
        import threading
        import time

        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not self._server.started:
            raise RuntimeError("the threaded memory service did not start")
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=30)
        self._sock.close()

    def __enter__(self) -> "ThreadedServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
