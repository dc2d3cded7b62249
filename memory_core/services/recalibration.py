"""Recalibration: the conflict threshold measured on each tenant's own live values under the
home's embedder (``write.recalibration``), compared with what the tenant's settings hold. The
API writes a changed one through the tenant settings op (``api/memory_workers.py``), so each
change is audited like a person's; a tenant's own ``conflict_threshold`` is never touched."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidInput
from ..model import FactVersion, Kind
from ..session import Session
from ..texts import value_text
from ..write import recalibration as stats


@dataclass(frozen=True)
class TenantCalibration:
    """One tenant's calibration: what is stored, what was measured, and so what is to be done.

    ``status``: ``current`` (stored for this embedder, at the measured value), ``stale`` (stored
    for this embedder, another value), ``other_embedder``, ``absent`` or ``too_few_facts`` (not
    measurable: fewer than ``MIN_FACTS`` live values in the whole home)."""

    tenant: str
    embedder: str
    status: str
    basis: str | None  # "tenant": its own values; "home": too few of its own, the home's
    measured: stats.Measurement | None
    stored_threshold: float | None
    stored_embedder: str | None
    explicit_threshold: float | None  # a person's conflict_threshold, which wins over this

    @property
    def due(self) -> bool:
        return self.status in ("stale", "other_embedder", "absent")

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "embedder": self.embedder,
            "status": self.status,
            "basis": self.basis,
            "measured": self.measured.to_dict() if self.measured else None,
            "stored_threshold": self.stored_threshold,
            "stored_embedder": self.stored_embedder,
            "explicit_threshold": self.explicit_threshold,
        }


class RecalibrationService:
    def __init__(self, session: Session) -> None:
        self.session = session

    def plan(self) -> list[TenantCalibration]:
        """Every tenant with live values, measured and compared with its settings (no write)."""
        session = self.session
        embedder = session.embedder
        if embedder is None:
            raise InvalidInput("recalibration measures the embedder: open the memory with an embedder")
        live = [s for s in session.versions.latest_states() if s.kind is Kind.FACT and session.indexable(s)]
        by_tenant: dict[str, list[FactVersion]] = {}
        for state in live:
            by_tenant.setdefault(state.tenant, []).append(state)
        vectors: dict[str, np.ndarray] = {}  # embedded once, whichever sample asks first
        home = self._measure(live, vectors) if len(live) >= stats.MIN_FACTS else None
        out = []
        for tenant in sorted(by_tenant):
            own = by_tenant[tenant]
            if len(own) >= stats.MIN_FACTS:
                measured, basis = self._measure(own, vectors), "tenant"
            else:
                measured, basis = home, ("home" if home is not None else None)
            out.append(self._compare(tenant, embedder.name, measured, basis))
        return out

    def _measure(self, states: list[FactVersion], vectors: dict[str, np.ndarray]) -> stats.Measurement | None:
        picked = [states[i] for i in stats.sample([s.fact_id for s in states])]
        todo = [s for s in picked if s.fact_id not in vectors]
        if todo:
            embedded = self.session.embedder.embed([value_text(s.value) for s in todo])
            vectors.update(zip((s.fact_id for s in todo), embedded))
        matrix = np.stack([vectors[s.fact_id] for s in picked])
        return stats.measure(matrix, [(s.tenant, s.scope, s.owner_id) for s in picked])

    def _compare(
        self, tenant: str, embedder: str, measured: stats.Measurement | None, basis: str | None
    ) -> TenantCalibration:
        config = self.session.write_config(tenant).tenant
        stored, stored_for = config.calibrated_threshold, config.calibrated_embedder
        if measured is None:
            status = "too_few_facts"
        elif stored is None or stored_for is None:
            status = "absent"
        elif stored_for != embedder:
            status = "other_embedder"
        else:
            status = "current" if stored == measured.threshold else "stale"
        return TenantCalibration(
            tenant, embedder, status, basis, measured, stored, stored_for, config.conflict_threshold
        )
