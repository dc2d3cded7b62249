"""HTTP clients that outlive one run: spawned once, each a process of its own with its own
``RemoteMemory``, then given one block of the loop after another (``paired``), so a run made of
several blocks pays the processes' start once and every block starts on the same wall-clock
instant in every client. Only light imports at module level: the processes are spawned and
import this module."""

from __future__ import annotations

import time
from typing import Any

from evals.service_load.loop import client_loop


class _StartAt:
    """``client_loop``'s start signal across processes: a wall-clock instant all of them share."""

    def __init__(self, at: float) -> None:
        self.at = at

    def wait(self) -> None:
        pause = self.at - time.time()
        if pause > 0:
            time.sleep(pause)


def _serve_blocks(url: str, token: str, inbox: Any, outbox: Any) -> None:
    """One client's process: a block (plan, seconds, start instant) at a time, until ``None``."""
    from memory_core.client import RemoteMemory

    try:
        with RemoteMemory(url, token) as remote:
            tool = remote.tool()
            outbox.put(("ready", None))
            while (block := inbox.get()) is not None:
                plan, seconds, at = block
                outbox.put(("done", client_loop(tool, plan, seconds, _StartAt(at))))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the run
        outbox.put(("fatal", f"{type(exc).__name__}: {exc}"))


class ClientPool:
    """``count`` client processes on ``url``, client ``i`` with ``tokens[i]``."""

    def __init__(self, url: str, tokens: list[str], count: int, *, timeout_s: float = 300) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        self._timeout = timeout_s
        self._inboxes = [ctx.Queue() for _ in range(count)]
        self._outboxes = [ctx.Queue() for _ in range(count)]
        self._procs = [
            ctx.Process(target=_serve_blocks, args=(url, tokens[i], self._inboxes[i], self._outboxes[i]), daemon=True)
            for i in range(count)
        ]
        for p in self._procs:
            p.start()
        try:
            for outbox in self._outboxes:
                self._answer(outbox, "ready", timeout_s)
        except BaseException:
            self.close()
            raise

    def _answer(self, outbox: Any, expected: str, timeout: float) -> Any:
        kind, value = outbox.get(timeout=timeout)
        if kind == "fatal":
            raise RuntimeError(f"a client process failed: {value}")
        if kind != expected:
            raise RuntimeError(f"a client process answered {kind!r}, not {expected!r}")
        return value

    def run(self, plans: list[dict], seconds: float, *, lead_s: float = 0.5) -> list[dict]:
        """One block: every client runs its plan for ``seconds``, all starting ``lead_s`` from now;
        their results, by client."""
        at = time.time() + lead_s
        for inbox, plan in zip(self._inboxes, plans):
            inbox.put((plan, seconds, at))
        return [self._answer(outbox, "done", seconds + self._timeout) for outbox in self._outboxes]

    def close(self) -> None:
        for inbox in self._inboxes:
            inbox.put(None)
        for p in self._procs:
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()
                p.join()
