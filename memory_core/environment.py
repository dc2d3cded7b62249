"""Settings read from the environment. The only module below the CLI that may read env vars."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, MutableMapping

HOME_ENV = "MEMCORE_HOME"
DEFAULT_HOME = ".memory"


def resolve_home(explicit: str | Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """``--home`` wins, then ``MEMCORE_HOME``, then ``./.memory``."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ if environ is None else environ
    value = env.get(HOME_ENV, "").strip()
    return Path(value).expanduser() if value else Path(DEFAULT_HOME)


STORE_ENV = "MEMCORE_STORE"


def resolve_store(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str | None:
    """``--store`` wins, then ``MEMCORE_STORE``; None: the home's own DuckDB file."""
    if explicit:
        return explicit
    env = os.environ if environ is None else environ
    return env.get(STORE_ENV, "").strip() or None


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


LANCE_THREADS_ENV = "LANCE_CPU_THREADS"


def lance_compute_threads(environ: MutableMapping[str, str] | None = None) -> None:
    """Give Lance one compute thread per core unless ``LANCE_CPU_THREADS`` says otherwise.

    Lance reserves cores for I/O and, on a machine of two, is left with one compute thread, so a
    search's two legs queue for it instead of running side by side (docs/benchmarks.md, "Lance's
    compute threads"). Lance reads the variable when it first computes, so this is called before
    a table is opened.
    """
    env = os.environ if environ is None else environ
    if not env.get(LANCE_THREADS_ENV, "").strip():  # blank would make Lance panic
        env[LANCE_THREADS_ENV] = str(max(1, os.cpu_count() or 1))


URL_ENV = "MEMCORE_URL"
KEY_ENV = "MEMCORE_KEY"


def resolve_service(
    url: str | None = None, key: str | None = None, environ: Mapping[str, str] | None = None
) -> tuple[str | None, str | None]:
    """The memory service to call and the API key to call it with: ``--url`` / ``--key`` win,
    then ``MEMCORE_URL`` / ``MEMCORE_KEY``. ``(None, ...)``: no service, open the home itself."""
    env = os.environ if environ is None else environ
    return (url or env.get(URL_ENV, "").strip() or None), (key or env.get(KEY_ENV, "").strip() or None)


LLM_KEY_ENVS = ("MEMCORE_LLM_KEY", "OPENAI_API_KEY")


def llm_api_key(environ: Mapping[str, str] | None = None) -> str:
    """The API key of an OpenAI-compatible model endpoint: $MEMCORE_LLM_KEY, else $OPENAI_API_KEY,
    else a placeholder (a local server that asks for none)."""
    env = os.environ if environ is None else environ
    return next((env[name].strip() for name in LLM_KEY_ENVS if env.get(name, "").strip()), "not-needed")
