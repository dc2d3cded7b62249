"""An erasure and structured profiles: a user's own schema and their profile go with them (the
census counts the table's rows and looks for the erased words in its schemas), and the tenant's
schema stays. In process only: an erasure is an operator's call on the home (test_erasure.py)."""

from __future__ import annotations

from memory_core.profiles import PROFILE_KEY
from tests.core.test_structured_profile import ADMIN, SCHEMA, setup


def test_an_erasure_of_the_user_takes_their_schema_and_profile_and_leaves_the_tenants(memory):
    _, ana = setup(memory)
    quote = {"type": "string", "description": "what zebracrossing said", "from": {"keys": ["quote"]}}
    ana.profile_schema_set({**SCHEMA, "quote": quote}, scope="user")  # her words, in her schema
    ana.set("quote", "zebracrossing at dawn")
    memory.build_profiles()
    assert "zebracrossing" in ana.profile().text
    request = memory.erase("acme", user="ana")
    assert request.status.value == "verified" and request.residue_count == 0, request.error
    assert request.residue["rows:profile_schemas"] == request.residue["text:profile_schemas"] == 0  # counted
    assert ana.profile_schema(scope="user") is None and ana.get(PROFILE_KEY) is None
    assert memory.for_run(ADMIN).profile_schema().version == 1  # the tenant's stays
    assert memory.store.unchecked_sql("SELECT count(*) AS n FROM profile_schemas WHERE owner_id = 'ana'") == [{"n": 0}]
    assert memory.verify_audit().ok
