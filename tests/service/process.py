"""A memory service as a real child process (``memory_core.service.serve``), for tests that kill it."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

SERVE = (
    "import json, sys; from memory_core.service import ServiceSettings, serve; "
    "serve(sys.argv[1], port=0, embedder='hashing', access_log=False, "
    "settings=ServiceSettings(drain_timeout_s=float(sys.argv[2]), **json.loads(sys.argv[3])), "
    "**json.loads(sys.argv[4]))"
)


class ServiceProcess:
    def __init__(
        self,
        home: Path,
        drain_timeout_s: float = 30.0,
        *,
        open_options: dict[str, Any] | None = None,
        **settings: object,
    ) -> None:
        """``settings``: more ``ServiceSettings`` fields (the webhook worker's interval, ...).
        ``open_options``: more ``Memory.open`` arguments, as JSON (``store``: a PostgreSQL
        authority's URL, ``key_dir``: the signing key's folder, which replicas share)."""
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                SERVE,
                str(home),
                str(drain_timeout_s),
                json.dumps(settings),
                json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in (open_options or {}).items()}),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.proc.kill()
            raise RuntimeError(f"the service did not announce itself: {self.proc.stderr.read()[-2000:]}")
        self.errors = ""
        announced = json.loads(line)
        self.url, self.pid = announced["url"], announced["pid"]
        # Standard error is read as it comes, so a long run's warnings never fill the pipe and
        # block the service; ``stop`` keeps what it said in ``errors``.
        self._said: list[str] = []
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            self._said.append(line)

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float = 30.0) -> int:
        return self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        """SIGTERM and wait (a kill after 30 s); its standard error is kept in ``errors``."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(timeout=10)
        self.errors = "".join(self._said)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()


@contextmanager
def service(
    home: Path, drain_timeout_s: float = 30.0, *, open_options: dict[str, Any] | None = None, **settings: object
) -> Iterator[ServiceProcess]:
    running = ServiceProcess(home, drain_timeout_s, open_options=open_options, **settings)
    try:
        yield running
    finally:
        running.stop()
