"""The OpenAI-compatible adapter of the LLM port, on the ``openai`` package.

Any server speaking the Chat Completions API works (``base_url``): answers are asked for as a
strict JSON schema (``response_format: json_schema``) and checked against it here too, since
not every compatible server enforces it. The client's own retries are off: this adapter retries
transient failures itself (408 / 409 / 429 / 5xx, timeouts, no connection) with exponential
backoff, honouring ``Retry-After`` up to a cap, and asks once more with twice the room when an
answer comes back malformed or cut short. Every call is accounted (tokens, cost) in ``ledger``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ...llm import LLMAnswer, LLMMalformed, LLMRefused, LLMUnavailable, Usage

RETRY_STATUSES = frozenset({408, 409, 429})


@dataclass(frozen=True, slots=True)
class CallRecord:
    schema_name: str
    model: str
    usage: Usage
    attempts: int
    outcome: str  # ok | unavailable | refused | malformed


@dataclass
class OpenAIChat:
    base_url: str
    model: str
    api_key: str = "not-needed"
    timeout_s: float = 30.0
    max_retries: int = 4  # transient failures retried per call
    backoff_s: float = 0.5  # first wait; doubles each retry
    max_backoff_s: float = 20.0
    price_in_per_mtok: float = 0.0  # USD per million prompt tokens
    price_out_per_mtok: float = 0.0  # USD per million completion tokens
    sleep: Callable[[float], None] = time.sleep
    ledger: list[CallRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        import openai

        self._openai = openai
        self._client = openai.OpenAI(
            base_url=self.base_url, api_key=self.api_key, timeout=self.timeout_s, max_retries=0
        )

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    @property
    def spent(self) -> Usage:
        total = Usage()
        for record in self.ledger:
            total = total + record.usage
        return total

    def complete_json(
        self,
        messages: Sequence[dict[str, str]],
        schema: dict[str, Any],
        *,
        schema_name: str,
        max_tokens: int = 1024,
        accept: dict[str, Any] | None = None,
    ) -> LLMAnswer:
        """``schema`` is what the model is asked for; ``accept`` (default: the same) is what an
        answer must match here, for callers that check entries one by one and drop the bad ones."""
        from jsonschema import Draft202012Validator

        validator = Draft202012Validator(accept or schema)
        usage, attempts, notes = Usage(), 0, []
        for room in (max_tokens, max_tokens * 2):  # an unusable answer is asked once more, with twice the room
            try:
                response, tries = self._request(messages, schema, schema_name, room)
            except (LLMUnavailable, LLMRefused) as exc:
                exc.details["attempts"] = attempts + int(exc.details.get("attempts", 0))
                exc.details["cost_usd"] = usage.cost_usd  # what the answers before it cost
                self._record(
                    schema_name,
                    usage,
                    exc.details["attempts"],
                    "unavailable" if isinstance(exc, LLMUnavailable) else "refused",
                )
                raise
            attempts += tries
            usage = usage + self._usage(response)
            problem, data = self._parse(response, validator)
            if problem is None:
                self._record(schema_name, usage, attempts, "ok")
                return LLMAnswer(data, response.model or self.model, usage, attempts, tuple(notes))
            notes.append(problem)
        self._record(schema_name, usage, attempts, "malformed")
        raise LLMMalformed(
            f"the model's answer was unusable twice: {'; '.join(notes)}",
            attempts=attempts,
            problems=notes,
            cost_usd=usage.cost_usd,  # unusable, and paid for: a caller keeping a budget counts it
        )

    # -- internals -----------------------------------------------------------------------------

    def _request(self, messages, schema, schema_name, max_tokens) -> tuple[Any, int]:
        openai = self._openai
        reached = False
        last = ""
        for attempt in range(self.max_retries + 1):
            wait = min(self.max_backoff_s, self.backoff_s * 2**attempt)
            try:
                response = self._client.chat.completions.create(
                    model=self.model,
                    messages=list(messages),
                    max_tokens=max_tokens,
                    temperature=0,
                    response_format={
                        "type": "json_schema",
                        "json_schema": {"name": schema_name, "schema": schema, "strict": True},
                    },
                )
                return response, attempt + 1
            except openai.APIStatusError as exc:
                reached = True
                status = exc.status_code
                if status not in RETRY_STATUSES and status < 500:
                    raise LLMRefused(
                        f"the provider refused the request ({status}): {_message(exc)}",
                        http_status=status,
                        attempts=attempt + 1,
                    ) from None
                last = f"HTTP {status}"
                wait = max(wait, min(self.max_backoff_s, _retry_after(exc)))
            except openai.APIConnectionError as exc:  # timeouts included
                last = "timed out" if isinstance(exc, openai.APITimeoutError) else "no connection"
            if attempt < self.max_retries:
                self.sleep(wait)
        raise LLMUnavailable(
            f"the provider at {self.base_url} is unavailable ({last}) after {self.max_retries + 1} attempts",
            reached=reached,
            attempts=self.max_retries + 1,
        )

    def _usage(self, response) -> Usage:
        u = getattr(response, "usage", None)
        prompt = int(getattr(u, "prompt_tokens", 0) or 0)
        completion = int(getattr(u, "completion_tokens", 0) or 0)
        cost = (prompt * self.price_in_per_mtok + completion * self.price_out_per_mtok) / 1e6
        return Usage(prompt, completion, cost)

    @staticmethod
    def _parse(response, validator) -> tuple[str | None, Any]:
        choices = getattr(response, "choices", None) or []
        if not choices:
            return "no choices in the answer", None
        choice = choices[0]
        if choice.finish_reason == "length":
            return "the answer was cut short (finish_reason length)", None
        content = getattr(choice.message, "content", None)
        if not content:
            return "the answer has no content", None
        try:
            data = json.loads(content)
        except json.JSONDecodeError as exc:
            return f"the answer is not JSON ({exc.msg} at {exc.pos})", None
        except (ValueError, RecursionError) as exc:  # an integer past Python's digit limit, nesting
            return f"the answer cannot be read as JSON ({type(exc).__name__})", None
        errors = sorted(validator.iter_errors(data), key=lambda e: list(e.path))
        if errors:
            where = "/".join(str(p) for p in errors[0].path) or "(root)"
            return f"the answer does not match the schema at {where}: {errors[0].message}", None
        return None, data

    def _record(self, schema_name: str, usage: Usage, attempts: int, outcome: str) -> None:
        self.ledger.append(CallRecord(schema_name, self.model, usage, attempts, outcome))


def _message(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:200]
    return str(exc)[:200]


def _retry_after(exc) -> float:
    try:
        return float(exc.response.headers.get("retry-after", 0))
    except (AttributeError, TypeError, ValueError):
        return 0.0
