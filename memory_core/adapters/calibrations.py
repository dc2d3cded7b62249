"""Relevance calibrations on disk: one JSON file per embedder and recipe under
``<home>/calibrations/``, written by ``memcore calibration install`` (or ``Memory.install_calibration``)
and read when the home opens. The package ships the ones fitted on the LoCoMo dev split for the
built-in embedders (``memory_core/retrieval/calibrations/``); a home's own file takes precedence."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Iterable

from ..retrieval.calibration import Calibration

Key = tuple[str, str]  # (embedder name, recipe name)


def _file_name(calibration: Calibration) -> str:
    stem = f"{calibration.embedder}.{calibration.recipe}"
    return re.sub(r"[^A-Za-z0-9_.-]", "_", stem) + ".json"


def _parse(texts: Iterable[str]) -> dict[Key, Calibration]:
    found: dict[Key, Calibration] = {}
    for text in texts:
        calibration = Calibration.from_dict(json.loads(text))
        found[(calibration.embedder, calibration.recipe)] = calibration
    return found


def packaged_calibrations() -> dict[Key, Calibration]:
    folder = resources.files("memory_core.retrieval").joinpath("calibrations")
    if not folder.is_dir():
        return {}
    return _parse(f.read_text() for f in sorted(folder.iterdir(), key=lambda f: f.name) if f.name.endswith(".json"))


def read_calibrations(home: Path) -> dict[Key, Calibration]:
    """The packaged calibrations, overridden by the home's own."""
    found = packaged_calibrations()
    folder = home / "calibrations"
    if folder.is_dir():
        found.update(_parse(p.read_text() for p in sorted(folder.glob("*.json"))))
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
