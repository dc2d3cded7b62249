"""The fuzz's (good, near) strategies for the reflect ops' arguments (``tests/fuzz.py`` adds them
to ``ARGS``); ``tenant`` is the shared one."""

from __future__ import annotations

from hypothesis import strategies as st

from memory_core.reflect import PHASES
from tests.fuzz_values import NEAR_TEXT

REFLECT_ARGS = {
    "phase": (st.sampled_from(PHASES), st.one_of(st.sampled_from(["digest", "Reduce", "reduce "]), NEAR_TEXT)),
}
