"""What a search leg filters on, as a value: the one scope, the sources, and the instants.

The index adapter renders it into its own filter language; the pipeline checks the same filter on
every row it answers (``pipeline.row_check``), so a lagging or damaged index can never
widen an answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..identity import Namespace
from ..model import Kind


@dataclass(frozen=True, slots=True)
class LegFilter:
    namespace: Namespace
    kinds: frozenset[Kind]
    as_of: datetime  # valid time: a row must be live then
    now: datetime  # a row expired by now is never answered
    observed_from: datetime | None = None
    observed_to: datetime | None = None
