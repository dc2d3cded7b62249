"""A point write's request (what the caller asked, validated) and its state across the phases."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..graph.model import Relation
from ..identity import Namespace
from ..model import FactVersion, Kind, Provenance
from ..timeline import StatementPlan
from .tenant_config import Threshold, TypeConfig, WriteConfig
from .verdicts import Verdict


@dataclass(frozen=True, slots=True)
class SetRequest:
    namespace: Namespace
    key: str
    value: Any
    value_json: str
    kind: Kind
    memory_type: str
    valid_at: datetime
    invalid_at: datetime | None
    invalid_at_given: bool
    observed_at: datetime | None
    provenance: Provenance
    now: datetime
    subject: str | None = None
    context: str | None = None
    ttl_seconds: float | None = None
    pin: bool = False
    proposed: bool = False
    if_match_sha256: str | None = None
    sensitivity: str | None = None
    source_class: str | None = None
    on_expire: str | None = None
    confidence: float | None = None
    dry_run: bool = False
    reinforce: bool = True  # False (import): a restatement, merge or duplicate records nothing
    relations: tuple[Relation, ...] = ()  # the graph facts the write names (at most eight)


@dataclass(frozen=True, slots=True)
class SetState:
    """Everything the phases have learned so far. Each phase returns a new state."""

    request: SetRequest
    config: WriteConfig
    memory_type: str = ""
    retyped_from: str | None = None
    type_config: TypeConfig | None = None
    states: tuple[FactVersion, ...] = ()  # the key's facts, latest state each
    head_version: int = 0
    live: FactVersion | None = None  # the key's fact live now
    plan: StatementPlan | None = None
    expires_at: datetime | None = None
    on_expire: str = "tombstone"
    content_sha256: str = ""
    value_text: str = ""
    sensitivity: str = "normal"
    source_class: str = "stated"
    created_at: datetime | None = None
    rows: tuple[FactVersion, ...] = ()  # the rows of the written key
    threshold: Threshold | None = None
    verdict: Verdict | None = None
    peer_rows: tuple[FactVersion, ...] = ()  # rows the verdict writes on peers' keys

    @property
    def restatement(self) -> bool:
        return self.plan is not None and self.plan.restates is not None
