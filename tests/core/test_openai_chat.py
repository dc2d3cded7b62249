"""The OpenAI-compatible LLM adapter against a scripted server on 127.0.0.1 (real HTTP)."""

import socket

import pytest

from memory_core.adapters.llm.openai_chat import OpenAIChat
from memory_core.llm import LLMMalformed, LLMRefused, LLMUnavailable
from tests.llm_server import DROP, MALFORMED, SLOW, TRUNCATED, ScriptedLLM, ok, status

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["facts"],
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["subject", "value"],
                "properties": {"subject": {"type": "string"}, "value": {"type": "string"}},
            },
        }
    },
}
GOOD = {"facts": [{"subject": "ana", "value": "lives in Lisbon"}]}
ASK = [{"role": "user", "content": "Ana: I live in Lisbon."}]


@pytest.fixture
def server():
    with ScriptedLLM() as s:
        yield s


def chat(server, **kw):
    waits = []
    llm = OpenAIChat(
        server.base_url, "test-model", sleep=waits.append, price_in_per_mtok=1.0, price_out_per_mtok=4.0, **kw
    )
    return llm, waits


def test_a_strict_schema_is_asked_for_and_the_answer_accounted(server):
    server.script = [ok(GOOD, prompt_tokens=1000, completion_tokens=500)]
    llm, _ = chat(server)
    answer = llm.complete_json(ASK, SCHEMA, schema_name="facts", max_tokens=300)
    assert answer.data == GOOD and answer.attempts == 1 and answer.model == "test-model"
    sent = server.requests[0]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"] == {"name": "facts", "schema": SCHEMA, "strict": True}
    assert sent["max_tokens"] == 300 and sent["temperature"] == 0
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (1000, 500)
    assert answer.usage.cost_usd == pytest.approx((1000 * 1.0 + 500 * 4.0) / 1e6)
    assert llm.spent == answer.usage and llm.ledger[-1].outcome == "ok"


def test_a_429_storm_is_ridden_out_with_growing_waits_and_retry_after(server):
    server.script = [status(429), status(429, retry_after=3), status(503), ok(GOOD)]
    llm, waits = chat(server, backoff_s=0.5)
    answer = llm.complete_json(ASK, SCHEMA, schema_name="facts")
    assert answer.data == GOOD and answer.attempts == 4
    assert waits == [0.5, 3.0, 2.0]  # 0.5, max(1.0, Retry-After 3), 2.0


def test_a_storm_longer_than_the_retries_is_unavailable_and_says_it_reached_the_provider(server):
    server.script = [status(429)]
    llm, waits = chat(server, max_retries=3)
    with pytest.raises(LLMUnavailable) as caught:
        llm.complete_json(ASK, SCHEMA, schema_name="facts")
    assert caught.value.reached and caught.value.details["attempts"] == 4 and len(waits) == 3
    assert caught.value.status == 503 and llm.ledger[-1].outcome == "unavailable"


@pytest.mark.parametrize("code", [408, 409, 500, 502])
def test_each_transient_status_is_retried(server, code):
    server.script = [status(code), ok(GOOD)]
    assert chat(server)[0].complete_json(ASK, SCHEMA, schema_name="facts").attempts == 2


@pytest.mark.parametrize("code", [400, 401, 403, 404, 422])
def test_a_refusal_is_typed_and_never_retried(server, code):
    server.script = [status(code), ok(GOOD)]
    llm, waits = chat(server)
    with pytest.raises(LLMRefused) as caught:
        llm.complete_json(ASK, SCHEMA, schema_name="facts")
    assert caught.value.details["http_status"] == code and waits == [] and len(server.requests) == 1
    assert f"scripted {code}" in caught.value.message


def test_a_malformed_answer_is_asked_again_with_twice_the_room(server):
    server.script = [MALFORMED, ok(GOOD)]
    llm, _ = chat(server)
    answer = llm.complete_json(ASK, SCHEMA, schema_name="facts", max_tokens=200)
    assert answer.data == GOOD and [r["max_tokens"] for r in server.requests] == [200, 400]
    assert "not JSON" in answer.notes[0]


def test_a_truncated_answer_is_asked_again_and_twice_unusable_is_malformed(server):
    server.script = [TRUNCATED]
    llm, _ = chat(server)
    with pytest.raises(LLMMalformed) as caught:
        llm.complete_json(ASK, SCHEMA, schema_name="facts", max_tokens=100)
    assert len(server.requests) == 2 and "cut short" in caught.value.message
    assert llm.ledger[-1].outcome == "malformed"


def test_an_answer_off_the_schema_is_malformed(server):
    server.script = [ok({"facts": [{"subject": "ana"}]}), ok({"facts": "none", "extra": 1})]
    with pytest.raises(LLMMalformed, match="does not match the schema"):
        chat(server)[0].complete_json(ASK, SCHEMA, schema_name="facts")


def test_a_dropped_connection_and_a_timeout_are_transient(server):
    server.script = [DROP, SLOW, ok(GOOD)]
    llm, _ = chat(server, timeout_s=0.5)
    assert llm.complete_json(ASK, SCHEMA, schema_name="facts").attempts == 3


def test_no_server_at_all_is_unavailable_and_unreached():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = OpenAIChat(f"http://127.0.0.1:{port}/v1", "m", sleep=lambda _: None, max_retries=2)
    with pytest.raises(LLMUnavailable) as caught:
        llm.complete_json(ASK, SCHEMA, schema_name="facts")
    assert not caught.value.reached and "no connection" in caught.value.message
