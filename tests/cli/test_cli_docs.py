"""Every verb of ``memcore`` is shown, as a command line, in the README or docs/."""

from __future__ import annotations

import re
from pathlib import Path

from memory_core.cli import VERBS

ROOT = Path(__file__).resolve().parents[2]


def test_every_verb_is_documented_as_a_command_line():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    lines = [line for page in pages for line in page.read_text(encoding="utf-8").splitlines() if "memcore" in line]
    missing = [
        name
        for name in VERBS
        if not any(re.search(r"\bmemcore\b.*?(?<![\w-])" + re.escape(name) + r"(?![\w-])", line) for line in lines)
    ]
    assert not missing, f"verbs no page shows as `memcore ... VERB`: {missing}"
    assert len(VERBS) >= 40  # the registry really was read
