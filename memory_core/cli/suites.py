"""The evaluation suites ``memcore eval`` runs: found through the ``memory_core.eval_suites``
entry points, so the library never imports them. The platform's ``evals`` package registers its
suites there (``pyproject.toml``); the eval assets import the same objects from ``evals.suites``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Callable, Protocol

ENTRY_POINT_GROUP = "memory_core.eval_suites"


class SuiteUsageError(ValueError):
    """A suite's option is not one it knows: ``memcore eval`` reports it as a usage error."""


@dataclass(frozen=True)
class EvalRequest:
    """What a suite runs on: its corpus (``data``, else found under ``shared``), where its report
    goes (``out``), where embedder models are cached (``models``), and its options."""

    data: str | None
    shared: Path
    out: Path
    models: Path
    runs: str | None = None
    embedder: str = "static"
    limit: int | None = None
    progress: Callable[[str], None] = field(default=lambda message: None)
    # Suites that call a language model (locomo-qa): OpenAI-compatible endpoints and their models.
    llm: str | None = None
    llm_model: str = "gpt-4o-mini"
    judge: str | None = None
    judge_model: str = "gpt-4o-mini"
    api_key: str = "not-needed"
    lenient: bool = False
    questions: int | None = None  # at most this many questions per conversation


class EvalSuite(Protocol):
    name: str
    help: str

    def run(self, request: EvalRequest) -> tuple[dict[str, Any], str]:
        """The result document and its text. A missing corpus raises ``FileNotFoundError`` (naming
        where it looked); a bad option ``SuiteUsageError``."""
        ...


def eval_suites() -> dict[str, EvalSuite]:
    """Every installed suite, by name."""
    found: dict[str, EvalSuite] = {}
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        found[point.name] = point.load()
    return found
