"""The reflect pipeline's decisions (``docs/reflect.md``): raw inputs reduced to atomic claims
(``reduce``), each claim's connections (``connect``), how it updates what is known
(``reweave``) and whether it may be written (``verify``). Pure: ``services.reflect`` reads the
store, runs these, and applies what they decide through the write paths."""

from .model import (
    PHASES,
    REFLECT_ACTOR,
    REFLECT_ORIGIN,
    Claim,
    Connection,
    PhaseReport,
    Plan,
    ReflectSettings,
    Source,
)

__all__ = [
    "PHASES",
    "REFLECT_ACTOR",
    "REFLECT_ORIGIN",
    "Claim",
    "Connection",
    "PhaseReport",
    "Plan",
    "ReflectSettings",
    "Source",
]
