"""The index's derived column live_span repeats the row's time columns in one: the search legs
read it instead. It must say exactly what those columns say, and a table written before it
existed must still be searched, and gain it on a writable open. So must a table written before
the columns the row priors read (session, confidence)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core import Identity, Memory
from memory_core.adapters.lance.read import DERIVED_COLUMNS, OPEN_END
from memory_core.adapters.lance.rows import index_rows, schema
from tests.conftest import T0

DIM = 4
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


def _check_derived(table):
    rows = table.to_pylist()
    for row in rows:
        assert row["live_span"] == [
            row["valid_at"],
            OPEN_END if row["invalid_at"] is None else row["invalid_at"],
            OPEN_END if row["expires_at"] is None else row["expires_at"],
        ]
    return rows


moments = st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=st.just(timezone.utc))
times = st.one_of(st.none(), moments)


@st.composite
def stored_columns(draw):
    """One list per stored column of the index schema, for 1-4 rows of arbitrary text and times."""
    n = draw(st.integers(1, 4))
    column = lambda strategy: draw(st.lists(strategy, min_size=n, max_size=n))  # noqa: E731
    columns = {f.name: column(texts) for f in schema(DIM) if pa.types.is_string(f.type)}
    columns.update({name: column(times) for name in ("invalid_at", "observed_at", "expires_at")})
    columns["valid_at"], columns["created_at"] = column(moments), column(moments)
    columns["version"] = columns["reinforcement_count"] = column(st.integers(0, 10))
    columns["confidence"] = column(st.one_of(st.none(), st.floats(0, 1)))
    return {name: values for name, values in columns.items() if name not in DERIVED_COLUMNS}


@settings(max_examples=200, deadline=None)
@given(columns=stored_columns())
def test_derived_columns_say_what_the_row_says(columns):
    n = len(columns["fact_id"])
    _check_derived(index_rows(columns, np.zeros((n, DIM)), DIM))


def _old_layout_home(home, clock):
    """A home whose index was written before the derived column and the prior columns existed."""
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper", session="s1"))
        tool.set("pet", "a grey cat called Miso")
        tool.set("trip", "a walk along the river", valid_at=T0 - timedelta(days=30), invalid_at=T0 - timedelta(days=1))
        memory.projector.flush()
        memory.projector.index.table.drop_columns(["live_span", "session", "confidence"])


def test_a_table_without_the_derived_column_is_searched_and_upgraded_on_a_writable_open(home, clock):
    _old_layout_home(home, clock)
    with Memory.open(home, clock=clock, embedder="hashing", read_only=True) as memory:
        tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        assert [h.key for h in tool.recall("cat called Miso").hits] == ["pet"]
        assert tool.recall("walk along the river", recipe="bm25_only").hits == ()  # closed yesterday
        assert tool.recall("cat called Miso", recipe="hybrid_session").hits[0].terms.get("session_prior") is None
        # a recency query names observed_at twice (date and recency priors); the key leg reads it too
        assert [h.key for h in tool.recall("the latest on pet").hits][:1] == ["pet"]
        names = memory.projector.index.table.schema.names
        assert not {"live_span", "session", "confidence"} & set(names)  # read-only: left as it was
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        index = memory.projector.index
        rows = _check_derived(index.table.to_arrow())
        assert sorted(r["key"] for r in rows) == ["pet", "trip"]
        # the session is the provenance's; an old row's confidence is unknown until written again
        assert {(r["session"], r["confidence"]) for r in rows} == {("s1", None)}
        hit = tool.recall("cat called Miso").hits[0]
        assert (hit.key, hit.value, hit.valid_at) == ("pet", "a grey cat called Miso", T0)
        assert [
            h.key for h in tool.recall("walk along the river", recipe="bm25_only", as_of=T0 - timedelta(days=2)).hits
        ] == ["trip"]
        tool.set("pet", "a black cat called Miso")  # later writes land in the new layout
        memory.projector.flush()
        _check_derived(index.table.to_arrow())
        assert tool.recall("black cat").hits[0].value == "a black cat called Miso"


def test_an_unreadable_provenance_gives_no_session_and_never_stops_the_upgrade():
    from memory_core.adapters.lance.layout import _session

    assert _session('{"session": "s1"}') == "s1"
    for bad in (None, "", "null", "[1, 2]", "{not json", '{"session": 3}'):
        assert _session(bad) is None
