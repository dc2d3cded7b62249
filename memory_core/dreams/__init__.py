"""Dreams: scheduled retrospection over one namespace's recent history. A pass reads the
window's state-change events, decision traces with their outcomes and the live facts, and
proposes merges, retirements, aging out and procedure notes; each proposal waits in an approval
queue, is written as an ``escalate`` decision trace, and changes nothing until approved."""

from .model import (
    ACTOR,
    AGE_OUT,
    APPLIED,
    KINDS,
    MERGE,
    ORIGIN,
    PENDING,
    PROCEDURE,
    REJECTED,
    RETIRE,
    STALE,
    STATUSES,
    DreamPass,
    DreamProposal,
    DreamSettings,
    DreamTarget,
)

__all__ = [
    "ACTOR",
    "AGE_OUT",
    "APPLIED",
    "KINDS",
    "MERGE",
    "ORIGIN",
    "PENDING",
    "PROCEDURE",
    "REJECTED",
    "RETIRE",
    "STALE",
    "STATUSES",
    "DreamPass",
    "DreamProposal",
    "DreamSettings",
    "DreamTarget",
]
