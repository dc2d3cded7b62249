"""Tenant blacklist patterns are RE2 patterns: linear-time matching, unsafe ones refused when
configured, and a stored pattern RE2 cannot compile refusing writes (fail closed)."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core import Identity, Memory
from memory_core.audit import audit_entry
from memory_core.errors import Blacklisted, BlacklistUnusable, InvalidInput, UnsafePattern
from memory_core.identity import Scope
from memory_core.write.blacklist import compile_blacklist, unicode_classes
from memory_core.write.tenant_config import TenantConfig, to_stored
from tests.conftest import T0, store_snapshot

ADMIN = Identity(tenant="acme", user="ana", agent="helper", admin=True)
CATASTROPHIC = r"(a+)+$"  # Python's re: about 2**n steps on n "a"s followed by one other character


def test_a_catastrophic_pattern_checks_a_value_promptly(memory):
    tool = memory.for_run(ADMIN)
    tool.configure(blacklist=[CATASTROPHIC])
    started = time.perf_counter()
    assert tool.set("near_miss", "a" * 40 + "!").verdict == "created"
    assert time.perf_counter() - started < 0.5  # re.search would take hours here
    started = time.perf_counter()
    with pytest.raises(Blacklisted) as refused:
        tool.set("hit", "a" * 40)
    assert time.perf_counter() - started < 0.5
    assert refused.value.details["pattern_index"] == 0 and tool.get("hit") is None


def test_matching_is_linear_in_the_value():
    blacklist = compile_blacklist([CATASTROPHIC, r"(x+x+)+y", r"(\w+\s?)+!$"])
    started = time.perf_counter()
    assert blacklist.first_match("a" * 10_000 + "!" + "x" * 10_000 + " ") is None
    assert blacklist.first_match("x" * 10_000 + "y") == 1
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize(
    "pattern",
    [
        r"(a)\1",  # a backreference
        r"secret(?=project)",  # lookahead
        r"(?<!top )secret",  # lookbehind
        r"a++",  # a possessive quantifier
        r"(?>a+)b",  # an atomic group
        r"end\Z",  # Python's \Z (RE2 spells it \z)
        r"(",  # not a regular expression at all
    ],
)
def test_configure_refuses_a_pattern_re2_cannot_compile_and_changes_nothing(memory, capfd, pattern):
    tool = memory.for_run(ADMIN)
    tool.configure(blacklist=["codename"])
    before = store_snapshot(memory)
    with pytest.raises(UnsafePattern) as refused:
        tool.configure(char_limit=100, blacklist=["fine", pattern])
    error = refused.value
    assert isinstance(error, InvalidInput) and (error.status, error.code) == (422, "UNSAFE_PATTERN")
    assert error.details["pattern_index"] == 1 and error.details["reason"]
    assert "#1" in error.message and "RE2" in error.message
    assert store_snapshot(memory) == before
    assert memory.write_config("acme").tenant.blacklist == ("codename",)
    assert memory.write_config("acme").tenant.char_limit != 100
    assert "Error parsing" not in capfd.readouterr().err  # RE2's own logging stays quiet


def _store_as_an_older_build(memory: Memory, blacklist: list[str]) -> None:
    """What an older build (Python ``re`` validation) wrote: the full tenant body, through the port."""
    body = to_stored(TenantConfig(blacklist=tuple(blacklist)))
    audit = audit_entry(ADMIN.namespace(Scope.TENANT), "config:*", "configure", (), None, ADMIN.actor, T0)
    memory.store.settings.put_write_config("acme", "", body, T0, audit)


def test_a_stored_pattern_re2_cannot_compile_refuses_writes_until_reconfigured(home, clock):
    old = r"(\w+) \1"  # a repeated word: Python's re compiled it, RE2 cannot
    with Memory.open(home, clock=clock) as memory:
        memory.for_run(ADMIN).set("theme", "dark mode")
        _store_as_an_older_build(memory, ["codename", old])
    with Memory.open(home, clock=clock) as memory:  # this build opens the older home
        tool = memory.for_run(ADMIN)
        before = store_snapshot(memory)
        for write in (
            lambda: tool.set("note", "nothing forbidden here"),
            lambda: tool.set("note", "nothing forbidden", dry_run=True),
            lambda: tool.bulk_set([{"key": "a", "value": "one"}, {"key": "b", "value": "two"}]),
        ):
            with pytest.raises(BlacklistUnusable) as refused:
                write()
            error = refused.value
            assert (error.status, error.code) == (409, "BLACKLIST_UNUSABLE")
            assert error.details["pattern_indexes"] == [1] and "configure" in error.message
            assert old not in error.message  # a writer is not told the admin's pattern
        assert store_snapshot(memory) == before
        assert tool.get("theme").value == "dark mode"  # reads never needed the blacklist
        tool.configure(char_limit=500)  # another setting keeps the stored blacklist: still refused
        with pytest.raises(BlacklistUnusable):
            tool.set("note", "still refused")
        tool.configure(blacklist=["codename", r"\w+ \w+ repeated"])
        assert tool.set("note", "nothing forbidden here").verdict == "created"
        with pytest.raises(Blacklisted):
            tool.set("note", "the codename is out")


def test_matching_searches_anywhere_with_the_patterns_own_flags(memory):
    tool = memory.for_run(ADMIN)
    tool.configure(blacklist=[r"(?i)internal codename \w+", r"^draft:", r"order \d+"])
    for value, index in [
        ("the INTERNAL Codename Äpfel leaked", 0),  # search, case-insensitive, \w is Unicode
        ("draft: notes", 1),
        ("order ٣٤", 2),  # \d is any decimal digit, as in Python
    ]:
        with pytest.raises(Blacklisted) as refused:
            tool.set("k", value)
        assert refused.value.details["pattern_index"] == index
    assert tool.set("k", "not a draft: notes").verdict == "created"  # ^ anchors at the start
    assert tool.set("k2", "internal codename").verdict == "created"


def test_python_unicode_classes_are_spelled_for_re2():
    assert unicode_classes(r"\w+") == r"[\p{L}\p{N}_]+"
    assert unicode_classes(r"[\w-]") == r"[\p{L}\p{N}_-]"
    assert unicode_classes(r"[]\d]") == r"[]\p{Nd}]"
    assert unicode_classes(r"\\w") == r"\\w"  # an escaped backslash, then the letter w
    assert unicode_classes(r"\Q\w\E\w") == r"\Q\w\E[\p{L}\p{N}_]"  # RE2's literal text is kept
    assert unicode_classes(r"[^\W]") == r"[^\W]"  # a complement inside a set stays RE2's


TEXT = st.text(st.sampled_from("ab é_Ä9٣ \t\n-.xyzAB"), max_size=24)
SAFE = [
    r"(?i)ab+",
    r"\w+\s\d",
    r"^a.*z",
    r"[\w-]{3}",
    r"(ab|é)+9?",
    r"\S+\.\S+",
    r"x\W+y",
    r"[^\s]{4,}",
    r"(?s)a.b",
    r"(?m)^b",
]


@settings(max_examples=200, deadline=None)
@given(text=TEXT)
def test_re2_answers_as_pythons_re_on_patterns_both_accept(text):
    blacklist = compile_blacklist(SAFE)
    assert not blacklist.refused
    found = next((i for i, p in enumerate(SAFE) if re.search(p, text)), None)
    assert blacklist.first_match(text) == found
