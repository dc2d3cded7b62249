"""Calibrated abstention: a fitted calibration gives each hit its P(relevant), and a search whose
top hit is unlikely to answer abstains with ``low_calibrated_confidence`` (docs/retrieval.md)."""

import json

import pytest

from memory_core import Identity, Memory
from memory_core.errors import InvalidInput
from memory_core.retrieval.calibration import LOW_CONFIDENCE, Calibration
from memory_core.retrieval.recipes import DEFAULT_RECIPE


@pytest.fixture
def memory(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as m:
        yield m


def tool_of(memory, **kw):
    return memory.for_run(Identity(tenant="acme", user="ana", agent="helper", **kw))


def cosine_calibration(memory, threshold=0.5, recipe=DEFAULT_RECIPE):
    """P(relevant) rises with the top hit's cosine: 0.5 at cosine 0.6."""
    return Calibration(
        memory.embedder.name, recipe, (0.0, 20.0, 0.0, 0.0, 0.0, 0.0), -12.0, threshold, fitted_on="test"
    )


def write_pets(tool):
    tool.set("pet", "Ana adopted a grey kitten called Miso in May")
    tool.set("car", "Ana drives an old blue bicycle to work every day")
    tool.set("food", "Ana cooks lentil soup on Sundays")


def test_an_unanswerable_query_abstains_with_low_calibrated_confidence(memory):
    tool = tool_of(memory)
    write_pets(tool)
    memory.install_calibration(cosine_calibration(memory))
    answered = tool.recall("Ana adopted a grey kitten called Miso")
    assert answered.verdict == "ok" and answered.hits[0].key == "pet"
    assert answered.hits[0].p_relevant > 0.9
    # One word in common passes the legs' own floors (a BM25 match), but nothing answers it.
    unanswerable = tool.recall("which airline did Ana fly to Tokyo with in May")
    assert unanswerable.hits, "the legs still return candidates"
    assert unanswerable.verdict == LOW_CONFIDENCE and unanswerable.abstain
    assert unanswerable.hits[0].p_relevant < 0.5
    assert all(h.p_relevant is not None for h in unanswerable.hits)


def test_without_a_calibration_hits_carry_no_probability_and_nothing_abstains_on_it(memory):
    tool = tool_of(memory)
    write_pets(tool)
    result = tool.recall("which airline did Ana fly to Tokyo with in May")
    assert result.verdict != LOW_CONFIDENCE and all(h.p_relevant is None for h in result.hits)
    # A calibration of another recipe does not apply to this one.
    memory.install_calibration(cosine_calibration(memory, recipe="hybrid_rrf"))
    assert tool.recall("which airline did Ana fly to Tokyo with in May").hits[0].p_relevant is None


def test_the_tenant_threshold_overrides_the_calibrations(memory):
    tool = tool_of(memory)
    write_pets(tool)
    memory.install_calibration(cosine_calibration(memory))
    admin = memory.for_run(Identity(tenant="acme", user="root", admin=True))
    assert admin.configure(abstain_below=0.0)["abstain_below"] == 0.0  # 0: never abstain on it
    assert tool.recall("which airline did Ana fly to Tokyo with in May").verdict == "ok"
    admin.configure(abstain_below=0.999)
    assert tool.recall("Ana adopted a grey kitten called Miso").verdict == LOW_CONFIDENCE
    with pytest.raises(InvalidInput):
        admin.configure(abstain_below=1.5)


def test_an_installed_calibration_is_kept_in_the_home(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        path = memory.install_calibration(cosine_calibration(memory, threshold=0.25))
        write_pets(tool_of(memory))
    assert json.loads(path.read_text())["abstain_below"] == 0.25
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        (kept,) = [c for c in memory.calibrations if c.embedder == memory.embedder.name]
        assert kept.abstain_below == 0.25 and kept.recipe == DEFAULT_RECIPE
        assert tool_of(memory).recall("grey kitten").hits[0].p_relevant is not None


def test_later_pages_carry_probabilities_too(memory):
    tool = tool_of(memory)
    write_pets(tool)
    memory.install_calibration(cosine_calibration(memory))
    first = tool.recall("Ana", k=1)
    second = tool.recall("Ana", k=1, cursor=first.next_cursor)
    assert second.hits and second.hits[0].p_relevant is not None


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"embedder": "e", "recipe": "r", "coef": [1, 2], "intercept": 0, "abstain_below": 0.1},
        {"embedder": "e", "recipe": "r", "coef": [1, 2, 3, 4, 5, 6], "intercept": 0, "abstain_below": 2},
        {"embedder": "e", "recipe": "r", "coef": [1, 2, 3, 4, 5, float("nan")], "intercept": 0, "abstain_below": 0.1},
        {"embedder": "", "recipe": "r", "coef": [1, 2, 3, 4, 5, 6], "intercept": 0, "abstain_below": 0.1},
        {
            "embedder": "e",
            "recipe": "r",
            "features": ["x"],
            "coef": [1, 2, 3, 4, 5, 6],
            "intercept": 0,
            "abstain_below": 0.1,
        },
        {"embedder": "e", "recipe": "r", "coef": "123456", "intercept": 0, "abstain_below": 0.1},
        {"embedder": "e", "recipe": "r", "coef": [1, 2, 3, 4, 5, 6], "intercept": 10**400, "abstain_below": 0.1},
        {"embedder": "e", "recipe": "r", "coef": [1, 2, 3, 4, 5, 6], "intercept": 0, "abstain_below": True},
    ],
)
def test_a_malformed_calibration_is_refused(body):
    with pytest.raises(InvalidInput):
        Calibration.from_dict(body)


def test_a_calibration_round_trips_through_its_json():
    calibration = Calibration(
        "static-minilm-256", "hybrid_zscore", (0.5, 3.0, 0.2, -0.4, 0.3, -0.1), -2.0, 0.1, "LoCoMo dev", 0.08
    )
    assert Calibration.from_dict(json.loads(json.dumps(calibration.to_dict()))) == calibration


def test_a_calibration_this_build_cannot_read_is_left_out_not_fatal(home, clock, caplog):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        write_pets(tool_of(memory))
    (home / "calibrations").mkdir()
    (home / "calibrations" / "old.json").write_text('{"embedder": "hashing-256", "coef": [1, 2, 3]}')
    with Memory.open(home, clock=clock, embedder="hashing") as memory:  # opens, and searches without it
        assert tool_of(memory).recall("grey kitten").hits[0].p_relevant is None
    assert "old.json" in caplog.text


def test_install_refuses_what_a_file_could_not_hold(memory):
    bad = Calibration(memory.embedder.name, DEFAULT_RECIPE, (float("nan"), 0, 0, 0, 0, 0), 0.0, 5.0)
    with pytest.raises(InvalidInput):
        memory.install_calibration(bad)
    assert memory.session.relevance_calibration(DEFAULT_RECIPE) is None


def test_a_fit_of_the_earlier_five_features_loads_with_the_gap_weighed_zero():
    body = {"embedder": "e", "recipe": "r", "coef": [1, 2, 3, 4, 5], "intercept": 0, "abstain_below": 0.1}
    body["features"] = ["score", "cosine", "log1p_bm25", "log_rank", "top_margin"]
    assert Calibration.from_dict(body).coef == (1.0, 2.0, 3.0, 4.0, 5.0, 0.0)


def test_calibrations_whose_names_read_alike_are_kept_apart(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        first = memory.install_calibration(Calibration("a.b", "c", (0,) * 6, 0.0, 0.1))
        second = memory.install_calibration(Calibration("a", "b.c", (0,) * 6, 0.0, 0.2))
    assert first != second
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        kept = {(c.embedder, c.recipe): c.abstain_below for c in memory.calibrations}
    assert kept[("a.b", "c")] == 0.1 and kept[("a", "b.c")] == 0.2
