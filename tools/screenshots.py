"""Render the marimo notebooks (exported to HTML) and the Dagster asset graph in headless Chromium.

    python -m tools.screenshots [--home PATH] [--out docs/screenshots]

Exported notebooks load marimo's front end from a CDN; this machine has no internet, so the
script points those URLs at the copy installed with the marimo package. Chromium is Debian's
``chromium`` package (``make screenshots`` and ``make test`` install it when missing), run
headless with a fresh profile and no network services.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--allow-file-access-from-files",
    "--hide-scrollbars",
]


def find_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def export_notebook(name: str, out_html: Path, *args: str, include_code: bool = False) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "marimo", "export", "html", str(NOTEBOOKS / f"{name}.py"), "-o", str(out_html)]
    if not include_code:
        command.append("--no-include-code")
    return subprocess.run([*command, "--", *args], capture_output=True, text=True, timeout=300)


def localize(html_path: Path) -> Path:
    """Point the exported page's CDN assets at the marimo front end installed here."""
    import marimo

    static = Path(marimo.__file__).parent / "_static"
    html = html_path.read_text(encoding="utf-8")
    html = re.sub(r"https://cdn\.jsdelivr\.net/npm/@marimo-team/frontend@[^/]+/dist", static.as_uri(), html)
    out = html_path.with_name(html_path.stem + ".local.html")
    out.write_text(html, encoding="utf-8")
    return out


def _run_chromium(args: list[str], timeout: int = 120) -> subprocess.CompletedProcess:
    chromium = find_chromium()
    if chromium is None:
        raise FileNotFoundError("chromium is not installed (Debian package `chromium`; `make test` installs it)")
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        return subprocess.run(
            [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def screenshot(url: str, png: Path, *, width: int = 1280, height: int = 1600, budget_ms: int = 15000) -> Path:
    png.parent.mkdir(parents=True, exist_ok=True)
    done = _run_chromium(
        [f"--window-size={width},{height}", f"--virtual-time-budget={budget_ms}", f"--screenshot={png}", url]
    )
    if not png.exists():
        raise RuntimeError(f"chromium wrote no screenshot of {url}: {done.stderr[-500:]}")
    return png


def rendered_text(url: str, *, budget_ms: int = 15000) -> str:
    """The page's DOM after its scripts ran (what a person would see, as HTML)."""
    return _run_chromium([f"--virtual-time-budget={budget_ms}", "--dump-dom", url]).stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dagster_graph(png: Path, home: Path) -> Path:
    """Start the Dagster webserver on 127.0.0.1, screenshot the global asset graph, stop it."""
    port = _free_port()
    env = {**os.environ, "MEMCORE_HOME": str(home), "DAGSTER_HOME": str(ROOT / ".dagster")}
    (ROOT / ".dagster").mkdir(exist_ok=True)
    shutil.copy(ROOT / "dagster.yaml", ROOT / ".dagster" / "dagster.yaml")  # telemetry off, no pop-up
    server = subprocess.Popen(
        [sys.executable, "-m", "dagster_webserver", "-m", "assets.definitions", "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(1)
        time.sleep(3)
        return screenshot(f"http://127.0.0.1:{port}/asset-groups", png, width=1600, height=1000, budget_ms=25000)
    finally:
        server.terminate()
        server.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", default=os.environ.get("MEMCORE_HOME", str(ROOT / ".memory")))
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    args = parser.parse_args(argv)
    home, out = Path(args.home).resolve(), Path(args.out)
    if not (home / "memory.duckdb").exists():
        print(f"no memory home at {home}: run `make run` first, or pass --home", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as work:
        for name in ("fact_timeline", "eval_report", "review_queue"):
            html = Path(work) / f"{name}.html"
            done = export_notebook(name, html, "--home", str(home))
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return 1
            print(screenshot(localize(html).as_uri(), out / f"{name}.png"))
    print(dagster_graph(out / "dagster_asset_graph.png", home))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
