"""`memcore ask` through a model on loopback, and `memcore calibration` list / install."""

import json

from memory_core.retrieval.calibration import Calibration
from memory_core.retrieval.recipes import DEFAULT_RECIPE
from tests.cli.test_cli import run
from tests.llm_server import ScriptedLLM, ok


def test_ask_answers_through_the_model_it_names_and_cites(home):
    run(home, "set", "pet", "a grey cat called Miso")
    with ScriptedLLM() as server:
        server.script = [ok({"answer": "Miso", "citations": [1], "abstain": False})]
        code, doc = run(home, "ask", "what is my cat called", "--llm", server.base_url, "--llm-model", "m1")
        assert server.requests[0]["model"] == "m1"
    assert code == 0 and doc["answer"] == "Miso" and not doc["abstained"]
    assert doc["citations"][0]["key"] == "pet" and doc["reason"] == "answered"


def test_ask_without_a_model_says_how_to_give_one(home):
    run(home, "set", "pet", "a grey cat called Miso")
    code, doc = run(home, "ask", "what is my cat called")
    assert code == 1 and doc["error"]["code"] == "LLM_NOT_CONFIGURED" and "--llm" in doc["error"]["message"]


def test_a_calibration_is_installed_from_its_file_and_listed(tmp_path, home):
    run(home, "set", "pet", "a grey cat called Miso")  # creates the home
    _, listed = run(home, "calibration", "list", identity=())
    before = len(listed["calibrations"])
    file = tmp_path / "cal.json"
    file.write_text(json.dumps(Calibration("hashing-256", DEFAULT_RECIPE, (0, 1, 0, 0, 0, 0), -1.0, 0.2).to_dict()))
    code, doc = run(home, "calibration", "install", str(file), identity=())
    assert code == 0 and doc["installed"]["abstain_below"] == 0.2
    _, listed = run(home, "calibration", "list", identity=())
    assert len(listed["calibrations"]) == before + 1
    file.write_text('{"coef": [1]}')
    code, doc = run(home, "calibration", "install", str(file), identity=())
    assert code == 1 and doc["error"]["code"] == "INVALID_INPUT"


def test_a_local_command_cannot_continue_an_earlier_commands_search(home):
    # The kept searches live in the process that ran them: through a service a cursor pages
    # (tests/core/test_search_pages.py runs remote too); a local command opens the home afresh.
    for n, place in enumerate(["river", "lake", "forest", "harbour"]):
        run(home, "set", f"trip{n}", f"a long walk by the {place}")
    _, first = run(home, "recall", "a long walk", "--k", "2")
    assert len(first["hits"]) == 2 and first["next_cursor"]
    code, doc = run(home, "recall", "a long walk", "--k", "2", "--cursor", first["next_cursor"])
    assert code == 1 and doc["error"]["code"] == "CURSOR_NOT_FOUND"
