"""Property: set, delete, restore, lock, unlock and reject on one key answer every as_of read
like a small independent model of the documented rules.

The model: each fact is [value, start, end, hidden, locked]. A statement closes the fact live at
its start and retires facts that begin inside its interval (the time model); a change that would
close a locked fact is refused; the same value live at its start only reinforces. delete hides
every visible fact (refused if one is locked); reject hides the fact live now (refused if locked);
lock and unlock flag the fact live now; restore undoes the key's latest change only when that
change hid facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import FixedClock, Identity, Memory
from memory_core.errors import Locked, NotFound, NothingToRestore
from tests.conftest import utc

BASE = utc(2024, 1, 1)
CLOCK_START = utc(2024, 1, 20)
DAY = timedelta(days=1)


@dataclass
class Fact:
    value: str
    start: datetime
    end: datetime | None
    hidden: bool = False
    locked: bool = False

    def live_at(self, t: datetime) -> bool:
        return (
            not self.hidden
            and self.start <= t
            and (self.end is None or t < self.end)
            and (self.end is None or self.start < self.end)
        )


@dataclass
class Model:
    facts: list[Fact] = field(default_factory=list)
    last_hid: list[Fact] | None = None  # what the latest change hid, if it hid anything
    written: bool = False

    def visible(self) -> list[Fact]:
        return [f for f in self.facts if not f.hidden]

    def live_now(self, now: datetime) -> Fact | None:
        live = [f for f in self.visible() if f.live_at(now)]
        return live[0] if live else None

    def set(self, value, start, end, end_given) -> str:
        for f in self.visible():
            if f.live_at(start) and f.value == value and (not end_given or f.end == end):
                self.last_hid, self.written = None, True
                return "restated"
        new_end = end
        touched = []
        for f in self.visible():
            if f.end is not None and f.end <= f.start:
                continue
            f_end = f.end
            if f.start < start and (f_end is None or start < f_end):
                touched.append((f, start))
            elif start <= f.start and (new_end is None or f.start < new_end):
                touched.append((f, f.start))
        if any(f.locked for f, _ in touched):
            raise Locked("locked")
        for f, at in touched:
            f.end = at
        self.facts.append(Fact(value, start, end))
        self.last_hid, self.written = None, True
        return "written"

    def delete(self) -> None:
        visible = self.visible()
        if not visible:
            raise NotFound("nothing")
        if any(f.locked for f in visible):
            raise Locked("locked")
        for f in visible:
            f.hidden = True
        self.last_hid = visible

    def reject(self, now) -> None:
        fact = self.live_now(now)
        if fact is None:
            raise NotFound("nothing live")
        if fact.locked:
            raise Locked("locked")
        fact.hidden = True
        self.last_hid = [fact]

    def flag(self, now, locked: bool) -> None:
        fact = self.live_now(now)
        if fact is None:
            raise NotFound("nothing live")
        if fact.locked != locked:
            fact.locked = locked
            self.last_hid = None

    def restore(self) -> None:
        if not self.written:
            raise NotFound("no key")
        if not self.last_hid:
            raise NothingToRestore("nothing")
        for f in self.last_hid:
            f.hidden = False
        self.last_hid = None

    def answer(self, as_of):
        live = [f.value for f in self.visible() if f.live_at(as_of)]
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
        st.tuples(st.sampled_from(["delete", "restore", "lock", "unlock", "reject"])),
    ),
    min_size=1,
    max_size=16,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=ops)
def test_lifecycle_ops_match_the_model(tmp_path_factory, sequence):
    clock = FixedClock(CLOCK_START)
    model = Model()
    with Memory.open(tmp_path_factory.mktemp("life"), clock=clock) as memory:
        tool = memory.for_run(Identity(tenant="t", user="u"))
        for op in sequence:
            clock.advance(timedelta(hours=1))
            now = clock.now()
            expected: type[Exception] | None = None
            try:
                if op[0] == "set":
                    _, value, start_day, length, end_given = op
                    start = BASE + start_day * DAY
                    end = start + length * DAY if (length is not None and end_given) else None
                    model.set(value, start, end, end is not None)
                elif op[0] == "delete":
                    model.delete()
                elif op[0] == "reject":
                    model.reject(now)
                elif op[0] in ("lock", "unlock"):
                    model.flag(now, op[0] == "lock")
                else:
                    model.restore()
            except (Locked, NotFound, NothingToRestore) as exc:
                expected = type(exc)
            try:
                if op[0] == "set":
                    tool.set("k", value, valid_at=start, invalid_at=end)
                elif op[0] == "restore":
                    tool.restore("k")
                else:
                    getattr(tool, op[0])("k")
                got = None
            except (Locked, NotFound, NothingToRestore) as exc:
                got = type(exc)
            assert got == expected, (op, got, expected)
            for day in range(-2, 75, 3):
                as_of = BASE + day * DAY
                fact = tool.get("k", as_of=as_of)
                assert (fact.value if fact else None) == model.answer(as_of), (op, as_of)
        assert memory.store.inspection.overlapping_intervals() == []
        assert memory.verify_audit().ok
