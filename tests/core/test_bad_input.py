"""Bad input: a typed error with a clear message, and the store exactly as it was."""

from datetime import datetime

import pytest

from memory_core import Identity, Memory
from memory_core.errors import (
    EmptyKey,
    HomeNotFound,
    IdentityIncomplete,
    InvalidInterval,
    MalformedTimestamp,
    MemcoreError,
    NaiveDatetime,
    NotSerializable,
    ScopeForbidden,
    UnknownKind,
    UnknownScope,
)
from tests.conftest import store_snapshot, utc

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service

CASES = [
    ("naive valid_at", lambda t: t.set("k", 1, valid_at=datetime(2024, 1, 1)), NaiveDatetime),
    ("naive iso string", lambda t: t.set("k", 1, valid_at="2024-01-01T00:00:00"), NaiveDatetime),
    ("naive as_of", lambda t: t.get("k", as_of=datetime(2024, 1, 1)), NaiveDatetime),
    (
        "invalid_at == valid_at",
        lambda t: t.set("k", 1, valid_at=utc(2024, 1, 1), invalid_at=utc(2024, 1, 1)),
        InvalidInterval,
    ),
    (
        "invalid_at before valid_at",
        lambda t: t.set("k", 1, valid_at=utc(2024, 2, 1), invalid_at=utc(2024, 1, 1)),
        InvalidInterval,
    ),
    ("unknown scope", lambda t: t.set("k", 1, scope="team"), UnknownScope),
    ("unknown scope on read", lambda t: t.list(scope="planet"), UnknownScope),
    ("global without admin", lambda t: t.set("k", 1, scope="global"), ScopeForbidden),
    ("global read without admin", lambda t: t.get("k", scope="global"), ScopeForbidden),
    ("empty key", lambda t: t.set("", 1), EmptyKey),
    ("blank key", lambda t: t.set("   ", 1), EmptyKey),
    ("non-JSON value", lambda t: t.set("k", object()), NotSerializable),
    ("NaN value", lambda t: t.set("k", float("nan")), NotSerializable),
    ("set value", lambda t: t.set("k", {1, 2}), NotSerializable),
    ("malformed ISO", lambda t: t.set("k", 1, valid_at="last tuesday"), MalformedTimestamp),
    ("malformed known_at", lambda t: t.get("k", known_at="2024-13-45"), MalformedTimestamp),
    ("unknown kind", lambda t: t.set("k", 1, kind="rumour"), UnknownKind),
]


@pytest.mark.parametrize("name,call,error", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_a_typed_error_and_changes_nothing(memory, tool, name, call, error):
    tool.set("k", "existing")
    before = store_snapshot(memory)
    with pytest.raises(error) as info:
        call(tool)
    assert isinstance(info.value, MemcoreError)
    assert info.value.message and info.value.code and 400 <= info.value.status < 500
    assert store_snapshot(memory) == before


def test_scope_needing_a_missing_identity_part_is_refused(memory):
    tool = memory.for_run(Identity(tenant="acme", agent="bot"))
    with pytest.raises(IdentityIncomplete, match="user id"):
        tool.set("k", 1, scope="user")
    tool = memory.for_run(Identity(tenant="acme", user="ana"))
    with pytest.raises(IdentityIncomplete, match="agent id"):
        tool.get("k", scope="agent")


def test_missing_home_for_a_read_is_a_typed_error_and_creates_nothing(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(HomeNotFound, match="no memory store"):
        Memory.open(missing, create=False)
    with pytest.raises(HomeNotFound):
        Memory.open(missing, read_only=True)
    assert not missing.exists()


def test_messages_name_no_stored_value(memory, tool_for):
    tool_for(user="bob").set("secret", "bob's diagnosis")
    with pytest.raises(MemcoreError) as info:
        tool_for(user="ana").delete("secret")
    assert "diagnosis" not in info.value.message
