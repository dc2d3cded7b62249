"""Settings read from the environment. The only module below the CLI that may read env vars."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

HOME_ENV = "MEMCORE_HOME"
DEFAULT_HOME = ".memory"


def resolve_home(explicit: str | Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """``--home`` wins, then ``MEMCORE_HOME``, then ``./.memory``."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ if environ is None else environ
    value = env.get(HOME_ENV, "").strip()
    return Path(value).expanduser() if value else Path(DEFAULT_HOME)


EMBEDDER_ENV = "MEMCORE_EMBEDDER"
DEFAULT_EMBEDDER = "static"


def resolve_embedder(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """``--embedder`` wins, then ``MEMCORE_EMBEDDER``, then ``static``. ``none``: keep no index."""
    if explicit:
        return explicit
    env = os.environ if environ is None else environ
    return env.get(EMBEDDER_ENV, "").strip() or DEFAULT_EMBEDDER


SHARED_ENV = "MEMCORE_SHARED"


def shared_root(environ: Mapping[str, str] | None = None) -> Path:
    """Where public corpora live: $MEMCORE_SHARED, else ../shared beside the working directory."""
    env = os.environ if environ is None else environ
    value = env.get(SHARED_ENV, "").strip()
    return Path(value).expanduser() if value else Path.cwd().parent / "shared"
