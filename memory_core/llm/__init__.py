"""What a language model answers: strict-JSON answers with accounting, and typed failures.

The ``LLM`` protocol itself is a port (``memory_core.ports.LLM``).
"""

from .answers import LLMAnswer, LLMMalformed, LLMRefused, LLMUnavailable, Usage

__all__ = ["LLMAnswer", "LLMMalformed", "LLMRefused", "LLMUnavailable", "Usage"]
