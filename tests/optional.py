"""An optional package a test needs. Skipped with what its import raised: a fresh clone's venv,
which installs the package, twice skipped the tuning tests as if it were missing, and the skip
said nothing more (``pytest.importorskip`` with a reason drops the error)."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest


def require(module: str, why: str) -> ModuleType:
    """``module`` imported, or the test skipped saying ``why`` and what the import raised."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        pytest.skip(f"{why} (import {module}: {_chain(exc)})")


def _chain(exc: BaseException) -> str:
    """The error and what raised it, innermost last: a lazy import (``transformers``) wraps the
    error that stopped it in one that only names the attribute it was loading."""
    said = []
    seen: BaseException | None = exc
    while seen is not None and len(said) < 4:
        said.append(f"{type(seen).__name__}: {seen}")
        seen = seen.__cause__ or seen.__context__
    return " <- ".join(said)
