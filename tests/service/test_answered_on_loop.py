"""A get the service holds in memory is answered on its event loop, without a worker thread's
round trip; one that would wait (a namespace not loaded yet, the store at an earlier instant)
runs on a worker thread instead, and answers the same (service/state.py, ``answer_now``)."""

from __future__ import annotations

import re
import threading

import httpx

from memory_core import FixedClock, Memory
from memory_core.adapters.embedders import HashingEmbedder
from memory_core.api.ops import READ_OPS
from memory_core.service import ThreadedServer
from memory_core.service.state import ANSWERED_ON_LOOP
from tests.conftest import T0
from tests.waiting_home import Held, home_with_facts


def _counters(url: str) -> tuple[int, int]:
    text = httpx.get(f"{url}/metrics").text
    on_loop = re.search(r"^memcore_ops_on_loop_total (\d+)", text, re.M)
    fallbacks = re.search(r"^memcore_ops_loop_fallbacks_total (\d+)", text, re.M)
    assert on_loop and fallbacks, text
    return int(on_loop.group(1)), int(fallbacks.group(1))


def _get(url: str, token: str, **body) -> httpx.Response:
    return httpx.post(f"{url}/v1/get", headers={"Authorization": f"Bearer {token}"}, json=body, timeout=10)


def test_only_ops_that_change_nothing_are_tried_on_the_event_loop():
    assert ANSWERED_ON_LOOP <= READ_OPS


def test_a_get_in_memory_is_answered_on_the_loop_and_one_that_would_wait_on_a_worker(tmp_path):
    home_with_facts(tmp_path / "home")
    with Memory.open(tmp_path / "home", clock=FixedClock(T0), embedder=HashingEmbedder()) as memory:
        ana, _ = memory.keys.create(tenant="acme", user="ana", agent="helper")
        with ThreadedServer(memory) as server:
            first = _get(server.url, ana, key="city")  # the namespace is loaded on a worker
            assert _counters(server.url) == (0, 1)
            second = _get(server.url, ana, key="city")
            missing = _get(server.url, ana, key="nowhere")
            assert _counters(server.url) == (2, 1)
            earlier = _get(server.url, ana, key="city", known_at=T0.isoformat())  # reads the store
            refused = _get(server.url, ana, key="")  # refused as anywhere: typed, on the loop
            assert _counters(server.url) == (2, 2)
    assert first.json() == second.json() == earlier.json()
    assert first.json()["result"]["value_json"] == '"Lisbon"'
    assert missing.status_code == 200 and missing.json() == {"result": None}
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "EMPTY_KEY"


def test_a_get_in_memory_is_answered_while_a_write_holds_the_store(tmp_path):
    home_with_facts(tmp_path / "home")
    with Memory.open(tmp_path / "home", clock=FixedClock(T0), embedder=HashingEmbedder()) as memory:
        ana, _ = memory.keys.create(tenant="acme", user="ana", agent="helper")
        bob, _ = memory.keys.create(tenant="acme", user="bob", agent="helper")
        with ThreadedServer(memory) as server:
            for token in (ana, bob):  # each key looked up once (that reads the store)
                httpx.get(f"{server.url}/v1/whoami", headers={"Authorization": f"Bearer {token}"})
            _get(server.url, ana, key="city")  # ana's namespace in memory; bob's not yet
            held = Held(memory.session.versions.locked())  # a write's read-decide-commit under way
            bobs: list[httpx.Response] = []
            waiting = threading.Thread(target=lambda: bobs.append(_get(server.url, bob, key="city")))
            try:
                waiting.start()
                answered = _get(server.url, ana, key="city")
                waiting.join(0.2)
                assert waiting.is_alive()  # bob's get needs the store: it waits, on a worker
            finally:
                held.release()
            waiting.join(10)
    assert answered.json()["result"]["value_json"] == '"Lisbon"'
    assert bobs and bobs[0].json()["result"]["value_json"] == '"Porto"'
