"""API keys: who is calling the memory service, decided from the key alone.

A key is ``mck_<key_id>_<secret>``. The home keeps the key id, the SHA-256 of the secret and the
identity the key stands for (tenant, user, agent, grants, admin); the secret itself is shown once,
when the key is made, and never stored. A request's run identity is the key's: nothing in a body
or a query may name a tenant, a user, an agent or a grant (``refuse_identity_fields``).

The secrets are 256 random bits, so one SHA-256 is enough to store them (a slow password hash
protects guessable secrets, and these are not guessable); comparison is constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable, Mapping

from .errors import IdentityOnWire, InvalidInput, Unauthenticated
from .identity import DEFAULT_MEMORY_SCOPES, GLOBAL_TENANT, Identity, Scope
from .inputs import utf8

PREFIX = "mck"
_TOKEN = re.compile(r"^mck_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$")

# Names that say who is calling. They come from the key; a request that sends one is refused,
# so a caller can never reach another owner's rows by naming them.
IDENTITY_FIELDS = frozenset(
    {
        "identity",
        "tenant",
        "user",
        "user_id",
        "agent",
        "agent_id",
        "owner",
        "owner_id",
        "namespace",
        "admin",
        "memory_scopes",
        "sql_scopes",
        "grants",
        "actor",
    }
)


@dataclass(frozen=True, slots=True)
class ApiKey:
    """What the home keeps of one key (never its secret)."""

    key_id: str
    secret_sha256: str
    tenant: str
    user: str | None
    agent: str | None
    memory_scopes: frozenset[Scope] = field(default=DEFAULT_MEMORY_SCOPES)
    sql_scopes: frozenset[Scope] = field(default=DEFAULT_MEMORY_SCOPES)
    admin: bool = False
    label: str | None = None
    created_at: datetime | None = None
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    created_by: str | None = None

    def identity(self, *, session: str | None = None, run: str | None = None, model: str | None = None) -> Identity:
        """The run identity of a request made with this key. ``session``, ``run`` and ``model``
        only label the provenance of what the request writes; they never choose an owner."""
        return Identity(
            tenant=self.tenant,
            user=self.user,
            agent=self.agent,
            session=session,
            run=run,
            model=model,
            memory_scopes=self.memory_scopes,
            sql_scopes=self.sql_scopes,
            admin=self.admin,
        )

    def state(self, now: datetime) -> str:
        if self.revoked_at is not None and self.revoked_at <= now:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"

    def summary(self, now: datetime) -> dict[str, Any]:
        """What ``keys list`` shows: everything but the secret's hash."""
        return {
            "key_id": self.key_id,
            "tenant": self.tenant,
            "user": self.user,
            "agent": self.agent,
            "memory_scopes": sorted(s.value for s in self.memory_scopes),
            "sql_scopes": sorted(s.value for s in self.sql_scopes),
            "admin": self.admin,
            "label": self.label,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "expires_at": self.expires_at.isoformat() if self.expires_at else None,
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
            "state": self.state(now),
        }


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def token(key_id: str, secret: str) -> str:
    return f"{PREFIX}_{key_id}_{secret}"


def parse_token(text: str | None) -> tuple[str, str]:
    """(key_id, secret) of a presented key, or ``Unauthenticated`` (the same for every malformed one)."""
    found = _TOKEN.match(text or "")
    if not found:
        raise Unauthenticated("a valid API key is required (Authorization: Bearer mck_...)")
    return found.group(1), found.group(2)


def check(key: ApiKey | None, secret: str, now: datetime) -> ApiKey:
    """The key a request presents, if it stands: unknown, wrong, revoked and expired keys are
    one refusal, so a caller learns nothing about which keys exist."""
    expected = key.secret_sha256 if key is not None else digest("0" * 43)  # same work either way
    if not hmac.compare_digest(expected, digest(secret)) or key is None or key.state(now) != "active":
        raise Unauthenticated("a valid API key is required (Authorization: Bearer mck_...)")
    return key


def new_key(
    key_id: str,
    secret: str,
    *,
    tenant: str,
    user: str | None,
    agent: str | None,
    memory_scopes: Iterable[str | Scope] | None,
    sql_scopes: Iterable[str | Scope] | None,
    admin: bool,
    label: str | None,
    now: datetime,
    expires_at: datetime | None,
    created_by: str,
) -> ApiKey:
    """A key record to store, checked: the identity must be one a run could have."""
    if tenant == GLOBAL_TENANT:
        raise InvalidInput(f"tenant name {GLOBAL_TENANT!r} is reserved for scope global", field="tenant")
    if expires_at is not None and expires_at <= now:
        raise InvalidInput("expires_at must be in the future", field="expires_at")
    if label is not None and (not isinstance(label, str) or len(label) > 200):
        raise InvalidInput("label is text of at most 200 characters", field="label")
    if label is not None:
        utf8(label, "label")
    identity = Identity(
        tenant=tenant,
        user=user,
        agent=agent,
        memory_scopes=frozenset(memory_scopes) if memory_scopes is not None else DEFAULT_MEMORY_SCOPES,
        sql_scopes=frozenset(sql_scopes) if sql_scopes is not None else DEFAULT_MEMORY_SCOPES,
        admin=admin,
    )  # validates every part
    if Scope.GLOBAL in identity.memory_scopes | identity.sql_scopes and not identity.admin:
        raise InvalidInput("scope global is admin-only: only an admin key may be granted it", field="memory_scopes")
    return ApiKey(
        key_id=key_id,
        secret_sha256=digest(secret),
        tenant=identity.tenant,
        user=identity.user,
        agent=identity.agent,
        memory_scopes=identity.memory_scopes,
        sql_scopes=identity.sql_scopes,
        admin=identity.admin,
        label=label,
        created_at=now,
        expires_at=expires_at,
        created_by=created_by,
    )


def refuse_identity_fields(given: Mapping[str, Any], where: str) -> None:
    """Refuse a body or a query that names who is calling: the key alone says that."""
    named = sorted(set(given) & IDENTITY_FIELDS)
    if named:
        raise IdentityOnWire(
            f"the {where} names {', '.join(named)}: the caller's identity comes from its API key alone",
            fields=named,
        )
