"""Property: the store answers every (as_of, known_at) exactly like a naive in-memory model.

The model keeps a plain list of (value, start, end) per key and applies the documented rule:
a new statement closes the fact live at its start and retires facts that begin inside its
interval; the same value live at its start (with no new end) only reinforces. It records a
copy of itself after every op, so "what the store held at T" is the last copy taken at or before T.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import FixedClock, Identity, Memory
from memory_core.errors import NotFound, NothingToRestore
from tests.conftest import utc

BASE = utc(2024, 1, 1)
CLOCK_START = utc(2024, 2, 1)  # some valid times lie before the clock, some after
DAY = timedelta(days=1)


@dataclass
class RefKey:
    facts: list[list] = field(default_factory=list)  # [value, start, end|None]
    deleted: bool = False
    exists: bool = False

    def set(self, value, start, end, end_given) -> str:
        if self.deleted:
            self.facts, self.deleted = [], False
        for v, s, e in self.facts:
            if s <= start and (e is None or start < e) and v == value and (not end_given or e == end):
                return "restated"
        kept = []
        for f in self.facts:
            v, s, e = f
            if s < start and (e is None or start < e):
                kept.append([v, s, start])
            elif start <= s and (end is None or s < end):
                continue  # retired
            else:
                kept.append(f)
        kept.append([value, start, end])
        self.facts, self.exists = kept, True
        return "written"

    def answer(self, as_of: datetime):
        if self.deleted:
            return None
        live = [v for v, s, e in self.facts if s <= as_of and (e is None or as_of < e)]
        assert len(live) <= 1
        return live[0] if live else None


ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("set"),
            st.sampled_from("abc"),
            st.integers(0, 40),
            st.one_of(st.none(), st.integers(1, 30)),
            st.booleans(),
        ),
        st.tuples(st.just("delete")),
        st.tuples(st.just("restore")),
    ).flatmap(lambda op: st.tuples(st.just(op), st.integers(0, 3))),
    min_size=1,
    max_size=18,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=ops)
def test_get_as_of_and_known_at_match_the_reference_model(tmp_path_factory, sequence):
    clock = FixedClock(CLOCK_START)
    ref = RefKey()
    snapshots: list[tuple[datetime, RefKey]] = []
    with Memory.open(tmp_path_factory.mktemp("prop"), clock=clock) as memory:
        tool = memory.for_run(Identity(tenant="t", user="u"))
        for op, step_hours in sequence:
            clock.advance(timedelta(hours=step_hours))  # 0: two writes at the same instant
            if op[0] == "set":
                _, value, start_day, length, end_given = op
                start = BASE + start_day * DAY
                end = start + length * DAY if (length is not None and end_given) else None
                verdict = tool.set("k", value, valid_at=start, invalid_at=end).verdict
                expected = ref.set(value, start, end, end_given and end is not None)
                assert (verdict == "restated") == (expected == "restated")
            elif op[0] == "delete":
                live = ref.exists and not ref.deleted
                try:
                    tool.delete("k")
                    assert live
                    ref.deleted = True
                except NotFound:
                    assert not live
            else:
                try:
                    tool.restore("k")
                    assert ref.deleted
                    ref.deleted = False
                except NothingToRestore:
                    assert ref.exists and not ref.deleted
                except NotFound:
                    assert not ref.exists
            snapshots.append((clock.now(), copy.deepcopy(ref)))

        # Every interval edge, and the instant just before it, is where an off-by-one would show.
        edges = {BASE, BASE + 80 * DAY}
        for op, _ in sequence:
            if op[0] == "set":
                start = BASE + op[2] * DAY
                edges |= {start, start + (op[3] or 0) * DAY}
        probes = sorted(edges | {e - timedelta(microseconds=1) for e in edges})
        for as_of in probes:
            got = tool.get("k", as_of=as_of)
            assert (got.value if got else None) == ref.answer(as_of), as_of
        # Transaction time: every instant at which the model was copied, and just before the first.
        assert tool.get("k", known_at=snapshots[0][0] - timedelta(microseconds=1), as_of=BASE) is None
        for i, (at, _) in enumerate(snapshots):
            held = [s for t, s in snapshots if t <= at][-1]
            for as_of in probes:
                got = tool.get("k", as_of=as_of, known_at=at)
                assert (got.value if got else None) == held.answer(as_of), (i, at, as_of)
        assert memory.store.inspection.overlapping_intervals() == []
        assert memory.verify_audit().ok
