"""Observation capture, as pure decisions: what a tool-trace observation may hold, the episodic
row each one is kept as, and the transcript a crystallized session is replayed as.

An observation is either a tool call ({tool, input?, output? | result?, error?, at?}) or a message
an agent's hooks saw ({role: user | assistant, content, at?}). Each is kept as one memory row of
type ``episodic`` under ``observe:<session>:<ordinal>-<nonce>``: the ordinal counts on from the
session's last one (so the keys sort in recording order, whatever the clock says), and the nonce
keeps two calls recording at once from sharing a key (neither overwrites the other: at worst
their ordinals interleave). The extraction worker reads a session's rows back in that order and
hands them to ``set_from_messages`` as turns: a message as itself, a tool call as a ``tool`` turn
named after the tool (the offline rules read only what a user said; a model reads the tool turns
too).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import InvalidInput
from ..inputs import text
from ..temporal import iso, parse_instant
from ..values import canonical_json

MAX_OBSERVATIONS = 500  # one record call
MAX_OBSERVATION_CHARS = 32_000  # one observation, as canonical JSON
MAX_SESSION_CHARS = 200
KEY_PREFIX = "observe:"
MEMORY_TYPE = "episodic"
_TOOL_FIELDS = frozenset(("tool", "input", "output", "result", "error", "at"))
_MESSAGE_FIELDS = frozenset(("role", "content", "at"))
_MESSAGE_ROLES = ("user", "assistant")


@dataclass(frozen=True, slots=True)
class Observed:
    """One stored observation, read back: its row's key and value, in recording order."""

    key: str
    value: Mapping[str, Any]


def check_session_id(session_id: Any) -> str:
    """A session id: non-blank text without ':' (it is part of the rows' keys) or control characters."""
    found = text(session_id, "session_id", max_chars=MAX_SESSION_CHARS).strip()
    if ":" in found or any(ord(c) < 32 for c in found):
        raise InvalidInput("session_id must not contain ':' or control characters", field="session_id")
    return found


def session_prefix(session_id: str) -> str:
    return f"{KEY_PREFIX}{session_id}:"


def is_observation_of(key: str, session_id: str) -> bool:
    """Is ``key`` an observation row of this session (and not of a session whose id it starts)?"""
    prefix = session_prefix(session_id)
    return key.startswith(prefix) and ":" not in key[len(prefix) :]


def check_observations(observations: Any) -> list[dict[str, Any]]:
    """The observations as the values their rows keep (``at`` as ISO text when given); refuses
    the whole list at its first bad element."""
    if isinstance(observations, (str, bytes, Mapping)) or not isinstance(observations, Sequence):
        raise InvalidInput("observations must be a list of objects", field="observations")
    if not observations:
        raise InvalidInput("observations must not be empty", field="observations")
    if len(observations) > MAX_OBSERVATIONS:
        raise InvalidInput(
            f"{len(observations)} observations in one call; the limit is {MAX_OBSERVATIONS}", field="observations"
        )
    return [_check_one(o, i) for i, o in enumerate(observations)]


def _check_one(item: Any, i: int) -> dict[str, Any]:
    where = f"observations[{i}]"
    if not isinstance(item, Mapping):
        raise InvalidInput(f"observation {i} must be an object", field=where)
    fields = _MESSAGE_FIELDS if "role" in item else _TOOL_FIELDS
    unknown = sorted(str(k) for k in set(item) - fields)
    if unknown:
        raise InvalidInput(f"observation {i}: unknown field(s) {', '.join(unknown)}", field=where)
    value: dict[str, Any] = {}
    if "role" in item:
        if item["role"] not in _MESSAGE_ROLES:
            raise InvalidInput(f"observation {i}: role must be user or assistant", field=f"{where}.role")
        value["role"] = item["role"]
        value["content"] = text(item.get("content"), f"{where}.content", max_chars=MAX_OBSERVATION_CHARS)
    else:
        value["tool"] = text(item.get("tool"), f"{where}.tool", max_chars=200).strip()
        if "output" in item and "result" in item:
            raise InvalidInput(f"observation {i}: give output or result, not both", field=where)
        for name in ("input", "output", "result"):
            if name in item:
                value["output" if name == "result" else name] = item[name]
        if item.get("error") is not None:
            value["error"] = text(item["error"], f"{where}.error", max_chars=4000)
    if item.get("at") is not None:
        value["at"] = iso(parse_instant(item["at"], f"{where}.at"))
    try:
        canonical_json(value, max_chars=MAX_OBSERVATION_CHARS)
    except InvalidInput as exc:
        raise type(exc)(f"observation {i}: {exc.message}", field=where) from None  # the code kept
    return value


def ordinal(key: str) -> int:
    """The recording ordinal a session's key carries (0 for a key of another shape)."""
    head = key.rsplit(":", 1)[-1].split("-", 1)[0]
    return int(head) if head.isdigit() else 0


def observation_keys(session_id: str, existing: Sequence[str], count: int, nonce: str) -> list[str]:
    """The keys of ``count`` new observations of a session whose rows hold ``existing`` keys."""
    start = max((ordinal(k) for k in existing), default=-1) + 1
    return [f"{session_prefix(session_id)}{start + i:06d}-{nonce}" for i in range(count)]


def ordered(observed: Sequence[Observed]) -> list[Observed]:
    """A session's observations in recording order: by ordinal, then key."""
    return sorted(observed, key=lambda o: (ordinal(o.key), o.key))


def as_messages(observed: Sequence[Observed]) -> list[dict[str, Any]]:
    """The transcript ``set_from_messages`` replays: one turn per observation, its id the row's
    key (so each extracted fact's provenance names the observation it came from)."""
    messages = []
    for o in observed:
        v = o.value
        if "role" in v:
            message: dict[str, Any] = {"role": v["role"], "content": v["content"]}
        else:
            message = {"role": "tool", "name": v["tool"], "content": _tool_text(v)}
        message["id"] = o.key
        if v.get("at"):
            message["at"] = v["at"]
        messages.append(message)
    return messages


def _tool_text(v: Mapping[str, Any]) -> str:
    parts = [f"{name}: {_words(v[name])}" for name in ("input", "output", "error") if name in v]
    return "\n".join(parts) or f"called {v['tool']}"


def _words(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
