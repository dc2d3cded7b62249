"""The reviewer's history views: lanes, the two sliders' answers, provenance, and the figure of them."""

from datetime import timedelta

from evals.figures import timeline as timeline_figure
from memory_core import history_view as view
from tests.conftest import utc


def test_lanes_sliders_and_provenance(tool, clock):
    tool.set("city", "Berlin", valid_at=utc(2021, 1, 1))
    first_known = clock.now()
    clock.advance(timedelta(days=1))
    tool.set("city", "Paris", valid_at=utc(2023, 3, 1))
    clock.advance(timedelta(days=1))
    tool.delete("city")
    history = tool.history("city")
    lanes = view.lanes(history)
    assert [lane.value for lane in lanes] == ["Berlin", "Paris"]
    assert [s.op.value for s in lanes[0].states] == ["set", "supersede", "delete"]
    then = view.believed_at(history, first_known)
    assert view.true_at(then, utc(2024, 1, 1)).value == "Berlin"  # before the correction was known
    now = view.believed_at(history, None)
    assert view.true_at(now, utc(2024, 1, 1)) is None  # deleted since
    valid, created = view.instants(history)
    assert utc(2023, 3, 1) in valid and len(created) == 3
    labels = dict(view.provenance(history[-1]))
    assert labels["agent"] == "helper" and labels["session"] == "s1" and labels["version"].startswith("v")


def test_the_figure_draws_one_row_per_fact(tool):
    tool.set("city", "Berlin", valid_at=utc(2021, 1, 1))
    tool.set("city", "Paris", valid_at=utc(2023, 3, 1))
    fig = timeline_figure(tool.history("city"), as_of=utc(2022, 1, 1), known_at=None)
    ax = fig.axes[0]
    assert len(ax.patches) == 2 and [t.get_text() for t in ax.get_yticklabels()] == ["fact 1", "fact 2"]


def test_the_figure_shows_what_the_store_held_at_known_at(tool, clock):
    tool.set("city", "Berlin", valid_at=utc(2021, 1, 1))
    known = clock.now()
    clock.advance(timedelta(days=1))
    tool.set("city", "Paris", valid_at=utc(2023, 3, 1))
    assert len(timeline_figure(tool.history("city"), known_at=known).axes[0].patches) == 1


def test_the_provenance_panel_names_who_judged_the_fact(tool):
    row = tool.set("office", "on the third floor").version
    judged = [
        {
            "judge": "rules-judge-v1",
            "verdict": "update",
            "confidence": 0.985,
            "peer_key": "office-old",
            "action": "retire",
            "reason": "another floor",
            "judged_fact": row.fact_id,
            "peer_fact": "x",
        },
        {
            "judge": "other",
            "verdict": "related",
            "confidence": 0.9,
            "peer_key": "k",
            "action": "nothing",
            "judged_fact": "someone-else",
            "peer_fact": "y",
        },
    ]
    labels = dict(view.provenance(row, judged))
    assert labels["judged by rules-judge-v1"] == "update 0.98 vs office-old: retire (another floor)"
    assert "judged by other" not in labels
