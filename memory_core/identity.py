"""Run identity, scopes, and how a scope resolves to the namespace that owns a row.

The owner id is always derived from the run identity, never taken from an op's arguments:
a caller-supplied owner would let one tenant's agent read another's rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .errors import IdentityIncomplete, InvalidInput, ScopeForbidden, UnknownScope
from .inputs import utf8


class Scope(str, Enum):
    AGENT = "agent"
    USER = "user"
    TENANT = "tenant"
    GLOBAL = "global"

    @classmethod
    def parse(cls, value: "str | Scope") -> "Scope":
        if isinstance(value, Scope):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            names = ", ".join(s.value for s in cls)
            raise UnknownScope(f"unknown scope {value!r}; expected one of: {names}", scope=str(value)) from None


DEFAULT_MEMORY_SCOPES = frozenset({Scope.AGENT, Scope.USER, Scope.TENANT})

# Rows in scope global live outside every tenant.
GLOBAL_TENANT = "_global"


@dataclass(frozen=True, slots=True)
class Namespace:
    """Where a row lives: exactly one (tenant, scope, owner_id)."""

    tenant: str
    scope: Scope
    owner_id: str


@dataclass(frozen=True, slots=True)
class Identity:
    """Who is running: stamped on every row's provenance and used to resolve every scope."""

    tenant: str
    user: str | None = None
    agent: str | None = None
    session: str | None = None
    run: str | None = None
    model: str | None = None
    memory_scopes: frozenset[Scope] = field(default=DEFAULT_MEMORY_SCOPES)
    sql_scopes: frozenset[Scope] = field(default=DEFAULT_MEMORY_SCOPES)
    admin: bool = False
    isolated: bool = False  # an isolated run's facts never leave its user's scope (placement)

    def __post_init__(self) -> None:
        for name in ("tenant", "user", "agent", "session", "run", "model"):
            value = getattr(self, name)
            if value is None:
                continue
            if not isinstance(value, str) or not value.strip():
                raise InvalidInput(f"identity {name} must be a non-empty string", field=name)
            utf8(value, f"identity {name}")  # an owner id is stored and compared as UTF-8 text
        if self.tenant == GLOBAL_TENANT:
            raise InvalidInput(f"tenant name {GLOBAL_TENANT!r} is reserved for scope global", field="tenant")
        object.__setattr__(self, "memory_scopes", frozenset(Scope.parse(s) for s in self.memory_scopes))
        object.__setattr__(self, "sql_scopes", frozenset(Scope.parse(s) for s in self.sql_scopes))

    @property
    def actor(self) -> str:
        """The principal a write is attributed to."""
        if self.agent:
            return f"agent:{self.agent}"
        if self.user:
            return f"user:{self.user}"
        return f"tenant:{self.tenant}"

    def namespace(self, scope: "str | Scope") -> Namespace:
        """Resolve ``scope`` to the one namespace this run may touch there, or refuse."""
        return self._resolve(scope, self.memory_scopes, "memory_scopes")

    def sql_namespace(self, scope: "str | Scope") -> Namespace:
        """As ``namespace``, for SQL memory: checked against the ``sql_scopes`` grant."""
        return self._resolve(scope, self.sql_scopes, "sql_scopes")

    def _resolve(self, scope: "str | Scope", granted: frozenset[Scope], grant: str) -> Namespace:
        resolved = Scope.parse(scope)
        if resolved is Scope.GLOBAL:
            if not self.admin:
                raise ScopeForbidden("scope global is admin-only; this run has no admin grant", scope="global")
            return Namespace(GLOBAL_TENANT, Scope.GLOBAL, GLOBAL_TENANT)
        if not self.admin and resolved not in granted:
            raise ScopeForbidden(
                f"this run lacks the {grant} grant {resolved.value!r}", scope=resolved.value, grant=grant
            )
        if resolved is Scope.AGENT:
            if not self.agent:
                raise IdentityIncomplete("scope agent needs an agent id in the run identity", scope="agent")
            return Namespace(self.tenant, resolved, self.agent)
        if resolved is Scope.USER:
            if not self.user:
                raise IdentityIncomplete("scope user needs a user id in the run identity", scope="user")
            return Namespace(self.tenant, resolved, self.user)
        return Namespace(self.tenant, Scope.TENANT, self.tenant)


def reviewer_identity(tenant: str, scope: str, owner_id: str, reviewer: str = "reviewer") -> Identity:
    """The run identity a reviewer acts as to reach one namespace (recorded as the actor)."""
    if scope == Scope.AGENT.value:
        return Identity(tenant=tenant, agent=owner_id, user=reviewer, session="review")
    if scope == Scope.USER.value:
        return Identity(tenant=tenant, user=owner_id, agent=reviewer, session="review")
    return Identity(tenant=tenant, user=reviewer, agent=reviewer, session="review")


def identity_fields(identity: Identity) -> dict[str, Any]:
    """A run identity as plain fields (what a queued job carries to run as its caller later)."""
    return {
        "tenant": identity.tenant,
        "user": identity.user,
        "agent": identity.agent,
        "session": identity.session,
        "run": identity.run,
        "model": identity.model,
        "memory_scopes": sorted(s.value for s in identity.memory_scopes),
        "sql_scopes": sorted(s.value for s in identity.sql_scopes),
        "isolated": identity.isolated,
    }


def identity_from(fields: dict[str, Any]) -> Identity:
    return Identity(
        tenant=fields["tenant"],
        user=fields.get("user"),
        agent=fields.get("agent"),
        session=fields.get("session"),
        run=fields.get("run"),
        model=fields.get("model"),
        memory_scopes=frozenset(fields.get("memory_scopes") or ("agent", "user", "tenant")),
        sql_scopes=frozenset(fields.get("sql_scopes") or ("agent", "user", "tenant")),
        isolated=bool(fields.get("isolated")),
    )
