"""Relevance calibrations on disk: one JSON file per embedder and recipe under
``<home>/calibrations/``, written by ``memcore calibration install`` (or ``Memory.install_calibration``)
and read when the home opens. The package ships the ones fitted on the LoCoMo dev split for the
built-in embedders (``memory_core/retrieval/calibrations/``); a home's own file takes precedence."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Iterable, Mapping

from ..errors import InvalidInput
from ..retrieval.calibration import Calibration

log = logging.getLogger(__name__)

Key = tuple[str, str]  # (embedder name, recipe name)


def _file_name(calibration: Calibration) -> str:
    """Readable, and one per (embedder, recipe): names that read alike still differ by the digest."""
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{calibration.embedder}.{calibration.recipe}")[:100]
    digest = hashlib.sha256(f"{calibration.embedder}\0{calibration.recipe}".encode()).hexdigest()[:8]
    return f"{stem}.{digest}.json"


def _parse(files: Iterable[tuple[str, str]]) -> dict[Key, Calibration]:
    """The calibrations of (name, text) pairs. One this build cannot read (another feature set, a
    damaged file) is left out with a warning: searches then run without it, never refuse the home."""
    found: dict[Key, Calibration] = {}
    for name, text in files:
        try:
            calibration = Calibration.from_dict(json.loads(text))
        except (InvalidInput, ValueError, RecursionError) as exc:
            log.warning("calibration %s left out: %s", name, exc)
            continue
        found[(calibration.embedder, calibration.recipe)] = calibration
    return found


@functools.cache
def packaged_calibrations() -> Mapping[Key, Calibration]:
    """The package's own, read once per process (package data does not change under it)."""
    folder = resources.files("memory_core.retrieval").joinpath("calibrations")
    if not folder.is_dir():
        return MappingProxyType({})
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".json")), key=lambda f: f.name)
    return MappingProxyType(_parse((f.name, f.read_text()) for f in files))


def _readable(paths: Iterable[Path]) -> Iterable[tuple[str, str]]:
    for path in paths:
        try:
            yield str(path), path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:  # a folder named x.json, a file this process may not read
            log.warning("calibration %s left out: %s", path, exc)


def read_calibrations(home: Path) -> dict[Key, Calibration]:
    """The packaged calibrations, overridden by the home's own."""
    found = dict(packaged_calibrations())
    folder = home / "calibrations"
    if folder.is_dir():
        found.update(_parse(_readable(sorted(folder.glob("*.json")))))
    return found


def write_calibration(home: Path, calibration: Calibration) -> Path:
    """Store ``calibration`` in the home (replacing the one of the same embedder and recipe)."""
    folder = home / "calibrations"
    folder.mkdir(exist_ok=True)
    path = folder / _file_name(calibration)
    staged = path.with_suffix(".json.tmp")
    staged.write_text(json.dumps(calibration.to_dict(), indent=2) + "\n")
    staged.replace(path)  # a reader sees the old file or the new one, never half of one
    return path
