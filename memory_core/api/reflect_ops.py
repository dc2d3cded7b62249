"""The operator's reflect ops (``Memory`` lists each in its class body; docs/reflect.md): the
five phases of a tenant's pipeline run in order or one at a time (what each Dagster asset of
the reflect job runs), and what the pipeline holds for a tenant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..reflect import PhaseReport
from ..services.reflect import ReflectService

if TYPE_CHECKING:
    from .memory import Memory


def reflect(self: Memory, tenant: str) -> list[PhaseReport]:
    """Run the tenant's reflect pipeline: reduce, reflect, reweave, verify, archive, each from
    its own cursor over the state-change stream. Idempotent: run again, it only reads what was
    written since."""
    return ReflectService(self.session).run(tenant)


def reflect_phase(self: Memory, tenant: str, phase: str) -> PhaseReport:
    """Run one phase of the tenant's reflect pipeline (``reduce``, ``reflect``, ``reweave``,
    ``verify`` or ``archive``) over what its upstream phase has finished since its cursor."""
    return ReflectService(self.session).phase(tenant, phase)


def reflect_state(self: Memory, tenant: str) -> dict[str, Any]:
    """The tenant's reflect cursors, the inputs read and every claim with its connections, plan
    and verdict (a rejected claim with its reason)."""
    return ReflectService(self.session).state(tenant)
