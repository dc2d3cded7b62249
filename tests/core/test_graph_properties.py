"""Properties of the one-value-current repair: a total order, whatever order the writes came in.

The generator replays what the store does: statements arrive one by one (each followed by the
repair), and a statement's rows may be retired later (closing it if still open, then the repair)."""

import dataclasses
import random
from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.graph.model import RETIRED, Observation
from memory_core.graph.order import changed_ends, repair, with_ends
from tests.conftest import utc

BASE = utc(2025, 10, 1)


def _repaired(obs):
    return with_ends(obs, changed_ends(obs))


@st.composite
def histories(draw):
    """The stored observations after a random sequence of arrivals and retirements."""
    events = []
    for i in range(draw(st.integers(1, 7))):
        seen = BASE + timedelta(hours=draw(st.integers(0, 96)), microseconds=i)
        dated = draw(st.booleans())
        start = (seen - timedelta(hours=draw(st.integers(0, 72)))) if dated else seen
        bounded = draw(st.integers(0, 4)) == 0
        obs = Observation(
            f"t{i}",
            "user",
            "lives_in",
            draw(st.sampled_from(["accra", "bern", "cairo", "dakar"])),
            start,
            dated,
            (start + timedelta(days=3)) if bounded else None,
            seen,
        )
        events.append((seen, "arrive", obs))
        if draw(st.integers(0, 3)) == 0:
            events.append((seen + timedelta(hours=draw(st.integers(0, 48)), microseconds=1), "retire", obs.triple_id))
    stored: list[Observation] = []
    for at, kind, item in sorted(events, key=lambda e: (e[0], e[1] == "retire")):
        if kind == "arrive":
            stored.append(item)
        else:
            stored = [
                dataclasses.replace(o, ended_at=max(o.valid_at, at), end_reason=RETIRED)
                if o.triple_id == item and o.ended_at is None
                else o
                for o in stored
            ]
        stored = _repaired(stored)
    return stored


def _current_open(obs, when):
    return {o.object for o in obs if o.open_ended and o.current_at(when)}


@settings(max_examples=300, deadline=None)
@given(obs=histories(), seed=st.integers(0, 2**16))
def test_the_repair_is_a_function_of_the_stored_rows_not_of_their_order(obs, seed):
    shuffled = list(obs)
    random.Random(seed).shuffle(shuffled)
    assert repair(obs) == repair(shuffled)
    assert changed_ends(obs) == {}  # idempotent: another writer's repair of the same rows changes nothing


@settings(max_examples=300, deadline=None)
@given(obs=histories())
def test_at_most_one_open_ended_value_is_current_at_any_instant(obs):
    for hour in range(-72, 24 * 9, 2):
        assert len(_current_open(obs, BASE + timedelta(hours=hour))) <= 1
    for o in obs:
        assert o.ended_at is None or o.ended_at >= o.valid_at  # never closed before it starts


@settings(max_examples=300, deadline=None)
@given(obs=histories())
def test_the_newest_value_by_the_key_stays_current_unless_retired(obs):
    held = [o for o in obs if not (o.end_reason == RETIRED and o.ended_at <= o.valid_at)]
    if held:
        newest = max(held, key=lambda o: o.order_key)
        if newest.open_ended and newest.end_reason != RETIRED:
            assert newest.ended_at is None
