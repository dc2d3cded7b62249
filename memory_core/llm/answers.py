"""What a language model answers the library: one strict-JSON answer per call, or a typed failure.

The ``LLM`` port (``memory_core.ports``) asks; adapters (``adapters.llm.openai_chat``) speak to
a provider; every failure is one of three typed errors, so a caller can tell "try later" from
"this will never work":

* ``LLMUnavailable`` (503): the provider could not be reached or kept failing transiently
  (timeouts, no connection, 408 / 409 / 429 / 5xx) after the adapter's retries. ``reached``
  says whether any request got an HTTP answer: an unreachable provider spends no attempt of a
  queued job.
* ``LLMRefused`` (502): the provider refused the request (another 4xx); retrying will not help.
* ``LLMMalformed`` (502): the answer was not JSON of the asked schema, or was cut short.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import MemcoreError


class LLMUnavailable(MemcoreError):
    status = 503
    code = "LLM_UNAVAILABLE"

    @property
    def reached(self) -> bool:
        return bool(self.details.get("reached"))


class LLMRefused(MemcoreError):
    status = 502
    code = "LLM_REFUSED"


class LLMMalformed(MemcoreError):
    status = 502
    code = "LLM_MALFORMED"


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cost_usd + other.cost_usd,
        )


@dataclass(frozen=True, slots=True)
class LLMAnswer:
    data: Any  # the parsed JSON, valid against the schema asked for
    model: str
    usage: Usage
    attempts: int = 1  # HTTP requests this answer took (retries included)
    notes: tuple[str, ...] = field(default=())
