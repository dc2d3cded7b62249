"""The service under test as a real subprocess: ``serve`` on 127.0.0.1, port 0, started with the
benchmark's embedder and access-log setting, its announced URL read from its first line of
output, its stderr kept in a log file, its ``/metrics`` histograms and CPU time read between
runs, and SIGTERM to stop it (a clean stop: exit code 0 or -15, and no traceback in its log)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from evals.service_load.loop import OPS

SERVE = """
import json, sys
from pathlib import Path
from memory_core.adapters.embedders import make_embedder
from memory_core.service import ServiceSettings, serve
cfg = json.loads(sys.argv[1])
if cfg["switch_interval"]:
    sys.setswitchinterval(cfg["switch_interval"])
upkeep = cfg["upkeep_interval"]
settings = ServiceSettings(**({} if upkeep is None else {"upkeep_interval_s": upkeep}))
serve(cfg["home"], host="127.0.0.1", port=0, access_log=cfg["access_log"], settings=settings,
      embedder=make_embedder(cfg["embedder"], cache_dir=Path(cfg["cache"])))
"""


class Service:
    """``serve`` in a subprocess; its announced URL; SIGTERM to stop."""

    def __init__(
        self,
        home: Path,
        embedder: str,
        cache: Path,
        access_log: bool,
        log_path: Path,
        switch_interval: float | None,
        upkeep_interval: float | None = None,
    ) -> None:
        cfg = {
            "home": str(home),
            "embedder": embedder,
            "cache": str(cache.resolve()),
            "access_log": access_log,
            "switch_interval": switch_interval,
            "upkeep_interval": upkeep_interval,
        }
        self.log_path = log_path
        self._log = open(log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVE, json.dumps(cfg)],
            stdout=subprocess.PIPE,
            stderr=self._log,
            cwd=os.getcwd(),
        )
        self.started = time.perf_counter()
        line = self._first_line(timeout=300)
        doc = json.loads(line)
        self.url, self.pid = doc["url"], doc["pid"]
        if not self.url.startswith("http://127.0.0.1:"):
            self.stop()
            raise RuntimeError(f"the service listens on {self.url}, not 127.0.0.1")
        # Whatever else it prints goes nowhere, but is read, so the pipe never fills.
        threading.Thread(target=lambda: self.proc.stdout.read(), daemon=True).start()

    def _first_line(self, timeout: float) -> str:
        box: list[bytes] = []
        reader = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        if not box or not box[0].strip():
            self.stop()
            tail = self.log_path.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the service did not announce its URL; its log ends:\n{tail}")
        return box[0].decode()

    def metrics(self) -> dict[str, dict[str, float]]:
        """Per op: the service's request count and summed seconds (its own clock)."""
        import httpx

        text = httpx.get(f"{self.url}/metrics", timeout=30).text
        out: dict[str, dict[str, float]] = {}
        for line in text.splitlines():
            for field, name in (("memcore_request_seconds_sum", "sum_s"), ("memcore_request_seconds_count", "n")):
                if line.startswith(field + "{"):
                    op = line.split('op="', 1)[1].split('"', 1)[0]
                    out.setdefault(op, {})[name] = float(line.rsplit(" ", 1)[1])
        return out

    def cpu_s(self) -> float:
        """CPU seconds the service process has used so far (user and system, all threads)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self, timeout: float = 120) -> dict[str, Any]:
        started = time.perf_counter()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        code = self.proc.returncode
        text = self.log_path.read_text(errors="replace")
        # uvicorn shuts down gracefully on SIGTERM, then may raise the signal again: -15 is clean.
        clean = code in (0, -signal.SIGTERM) and "Traceback" not in text
        return {"returncode": code, "stop_s": time.perf_counter() - started, "clean": clean}


def server_time(before: dict, after: dict) -> dict[str, float]:
    """Mean milliseconds the service spent per request, by op, between two scrapes."""
    out = {}
    for op in OPS:
        n = after.get(op, {}).get("n", 0) - before.get(op, {}).get("n", 0)
        s = after.get(op, {}).get("sum_s", 0) - before.get(op, {}).get("sum_s", 0)
        if n > 0:
            out[op] = s / n * 1000
    return out
