"""Property: a bulk_set answers every read exactly as the same entries written one by one.

(Proposals are left out: a bulk entry repeating a proposal's bytes writes nothing, by design, so
a replayed batch never turns a proposal into a fact; test_bulk.py holds that example.)"""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import FixedClock, Identity, Memory
from tests.conftest import T0

DAY = timedelta(days=1)
entries = st.lists(
    st.fixed_dictionaries(
        {
            "key": st.sampled_from(["a", "b", "c", "d"]),
            "value": st.sampled_from(["red", "green", "blue", 7, [1, 2]]),
            "valid_at": st.integers(-30, 30).map(lambda d: (T0 + d * DAY).isoformat()),
        },
        optional={"pin": st.just(True)},
    ),
    min_size=1,
    max_size=12,
)


def answers(tool, keys, probes):
    out = {}
    for key in keys:
        for as_of in probes:
            fact = tool.get(key, as_of=as_of)
            out[(key, as_of)] = (
                None if fact is None else (fact.value, fact.status.value, fact.pinned, fact.valid_at, fact.invalid_at)
            )
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=entries, prior=entries)
def test_bulk_set_matches_sequential_sets(tmp_path_factory, batch, prior):
    probes = [T0 + d * DAY for d in range(-31, 32, 3)]
    results = []
    for mode in ("bulk", "one_by_one"):
        clock = FixedClock(T0)
        with Memory.open(tmp_path_factory.mktemp(mode), clock=clock) as memory:
            tool = memory.for_run(Identity(tenant="t", user="u", admin=True))
            tool.configure(policy="append_only")
            for entry in prior:  # some keys exist before the batch, some do not
                try:
                    tool.set(**entry)
                except Exception:  # noqa: BLE001 - a refused prior write is part of the scenario
                    pass
            clock.advance(timedelta(hours=1))
            skipped = set()
            if mode == "bulk":
                result = tool.bulk_set(batch)
                skipped = set(result.skipped_pinned) | set(result.skipped_locked)
            else:
                for entry in batch:
                    try:
                        tool.set(**entry)
                    except Exception as exc:  # noqa: BLE001
                        skipped.add(entry["key"]) if type(exc).__name__ == "PinnedConflict" else None
                        if type(exc).__name__ not in ("PinnedConflict", "KeyHoldsFact"):
                            raise
            results.append(answers(tool, "abcd", probes))
            assert memory.verify_audit().ok
    assert results[0] == results[1]
