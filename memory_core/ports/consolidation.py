"""What consolidation keeps beside the version log: each run and each cluster's outcome, and
the lineage from a summary to the rows it was written from."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol, Sequence

from ..consolidation import ConsolidationRun
from ..identity import Namespace
from ..model import FactVersion


class ConsolidationStore(Protocol):
    def record_run(self, run: ConsolidationRun) -> None:
        """Keep a finished run and its clusters' outcomes."""
        ...

    def record_lineage(self, summary: FactVersion, sources: Sequence[FactVersion], run_id: str, at: datetime) -> None:
        """The summary was written from ``sources`` (support ``derived_from``)."""
        ...

    def runs(self, namespace: Namespace | None = None) -> list[ConsolidationRun]:
        """Every run (of a namespace), oldest first."""
        ...

    def run(self, run_id: str) -> ConsolidationRun | None: ...

    def mark_undone(self, run_id: str, at: datetime) -> None: ...

    def lineage(self, namespace: Namespace, fact_id: str) -> list[dict[str, Any]]:
        """The rows a derived fact was written from, and the derived facts written from it."""
        ...
