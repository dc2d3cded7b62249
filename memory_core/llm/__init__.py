"""The LLM port: strict-JSON answers from a model, with typed failures and accounting."""

from .port import LLM, LLMAnswer, LLMMalformed, LLMRefused, LLMUnavailable, Usage

__all__ = ["LLM", "LLMAnswer", "LLMMalformed", "LLMRefused", "LLMUnavailable", "Usage"]
