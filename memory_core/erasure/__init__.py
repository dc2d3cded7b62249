"""Erasure as a saga: what is erased (a target), the request's checkpoints, and the census that
proves it. Pure rules over frozen dataclasses; ``services/erasure.py`` applies them."""

from .census import Census, owning_step, pick_needles
from .model import STEPS, ErasureRequest, ErasureStatus, ErasureTarget, TargetKind
from .saga import abandon, advance, begin, census_outcome, next_step, recovery_due

__all__ = [
    "STEPS",
    "Census",
    "ErasureRequest",
    "ErasureStatus",
    "ErasureTarget",
    "TargetKind",
    "abandon",
    "advance",
    "begin",
    "census_outcome",
    "next_step",
    "owning_step",
    "pick_needles",
    "recovery_due",
]
