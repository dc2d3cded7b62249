"""The wire form: whatever the tool answers comes back from JSON as the same value of the same
type, and every typed error comes back as its own class."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import json
import threading
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core import errors
from memory_core.identity import Namespace, Scope
from memory_core.model import FactVersion
from memory_core.wire import decode, decode_any, encode, error_body, raise_error

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(),
    st.datetimes(timezones=st.just(dt.timezone.utc)),
    st.dates(),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.uuids(),
    st.binary(max_size=20),
    st.timedeltas(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)),
    max_leaves=20,
)


@given(values)
def test_any_value_survives_the_wire_as_it_left(value):
    assert decode_any(json.loads(json.dumps(encode(value)))) == value


def test_a_plain_object_that_looks_like_a_tag_is_not_taken_for_one():
    value = {"$t": "datetime", "v": "2024-01-01T00:00:00+00:00"}
    assert decode_any(json.loads(json.dumps(encode(value)))) == value
    assert decode_any(encode([float("nan")]))[0] != decode_any(encode([float("nan")]))[0]  # NaN, as NaN
    assert decode_any(encode(float("inf"))) == float("inf")


def test_typed_fields_read_as_plain_json_and_come_back_typed():
    when = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)
    ns = Namespace("acme", Scope.USER, "ana")
    assert encode(ns, Namespace) == {"tenant": "acme", "scope": "user", "owner_id": "ana"}
    assert decode(Namespace, encode(ns, Namespace)) == ns
    assert decode(dt.datetime | None, encode(when, dt.datetime | None)) == when
    assert encode(when, dt.datetime | None) == "2024-03-01T00:00:00+00:00"  # plain text where a datetime is declared
    assert decode(list[Scope], ["user", "agent"]) == [Scope.USER, Scope.AGENT]
    assert decode(dict[str, int], {"a": 1}) == {"a": 1}
    assert decode(tuple[str, ...], ["a", "b"]) == ("a", "b")
    assert decode(frozenset[Scope], ["user"]) == frozenset({Scope.USER})
    assert decode_any(encode({"d": decimal.Decimal("1.5"), "u": uuid.UUID(int=1)})) == {
        "d": decimal.Decimal("1.5"),
        "u": uuid.UUID(int=1),
    }
    with pytest.raises(TypeError):
        encode(object())


def _all_error_classes():
    found, pending = [], [errors.MemcoreError]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__ == "memory_core.errors" and "code" in vars(cls):
            found.append(cls)
    return found


@pytest.mark.parametrize("cls", _all_error_classes(), ids=lambda c: c.__name__)
def test_every_typed_error_comes_back_as_its_class(cls):
    sent = cls("refused for a reason", field="key", when=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))
    body = json.loads(json.dumps(error_body(sent)))
    with pytest.raises(cls) as caught:
        raise_error(body, sent.status)
    got = caught.value
    assert type(got) is cls and (got.code, got.status, got.message) == (sent.code, sent.status, sent.message)
    assert got.details == sent.details


def test_an_unknown_code_keeps_its_code_and_status():
    with pytest.raises(errors.MemcoreError) as caught:
        raise_error({"error": {"code": "FROM_THE_FUTURE", "status": 418, "message": "teapot"}}, 418)
    assert (caught.value.code, caught.value.status, caught.value.message) == ("FROM_THE_FUTURE", 418, "teapot")
    with pytest.raises(errors.InternalError):
        raise_error({}, 502)  # a proxy's page, not the service's answer


def test_codes_are_unique():
    codes = [cls.code for cls in _all_error_classes()]
    assert len(codes) == len(set(codes))


def test_a_fact_version_is_plain_json_on_the_wire():
    fields = {f for f in FactVersion.__dataclass_fields__}
    assert "value_json" in fields and "valid_at" in fields


@dataclasses.dataclass(frozen=True)
class Outline:
    """A dataclass that names itself among its fields' types."""

    title: str
    written: dt.datetime | None = None
    parts: list[Outline] = dataclasses.field(default_factory=list)


def test_a_dataclass_that_contains_itself_comes_back_whole():
    tree = Outline("a", dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc), [Outline("b", None, [Outline("c")])])
    assert decode(Outline, json.loads(json.dumps(encode(tree, Outline)))) == tree
    assert decode(list[Outline] | None, None) is None


def test_threads_decoding_a_type_for_the_first_time_all_get_every_field():
    @dataclasses.dataclass(frozen=True)
    class Wide:
        f0: int = -1
        f1: int = -1
        f2: int = -1
        f3: int = -1
        f4: int = -1
        f5: int = -1
        f6: int = -1
        f7: int = -1

    sent = {f"f{i}": i for i in range(8)}
    start, seen = threading.Barrier(8), []

    def one() -> None:
        start.wait()
        seen.append(decode(Wide, sent))

    threads = [threading.Thread(target=one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [Wide(*range(8))] * 8
