"""Consolidation: similar live facts of one namespace merged into one summary, with lineage to
the rows it was written from, each merged row retired as a new version an undo reverses."""

from .merge import Merger, RuleMerger
from .model import (
    OUTCOMES,
    ClusterOutcome,
    ConsolidationRun,
    ConsolidationSettings,
    MergeAnswer,
    MergeRequest,
    MergeSource,
)

__all__ = [
    "OUTCOMES",
    "ClusterOutcome",
    "ConsolidationRun",
    "ConsolidationSettings",
    "MergeAnswer",
    "MergeRequest",
    "MergeSource",
    "Merger",
    "RuleMerger",
]
