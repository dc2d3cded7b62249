"""API keys for the memory service: make one (its secret shown once), list, revoke, and tell who
a presented key stands for. The decisions are ``memory_core.access``'s; this applies them."""

from __future__ import annotations

import secrets
import threading
from datetime import datetime
from typing import Iterable

from ..access import ApiKey, check, new_key, parse_token, token
from ..audit import AuditEntry
from ..errors import NotFound
from ..identity import Scope
from ..inputs import text
from ..ports import ApiKeyStore
from ..session import Session

_CACHE_LIMIT = 10_000


class AccessService:
    """The home's API keys. Looked-up keys are cached: this process owns the home, so every change
    to a key passes through here and clears its entry."""

    def __init__(self, session: Session, keys: ApiKeyStore | None = None) -> None:
        self.session = session
        self.keys = keys if keys is not None else session.store.api_keys
        self._cache: dict[str, ApiKey] = {}
        self._lock = threading.Lock()

    def forget(self) -> None:
        """Drop every looked-up key (an erasure deleted some: none may authenticate again)."""
        with self._lock:
            self._cache.clear()

    def create(
        self,
        *,
        tenant: str,
        user: str | None = None,
        agent: str | None = None,
        memory_scopes: Iterable[str | Scope] | None = None,
        sql_scopes: Iterable[str | Scope] | None = None,
        admin: bool = False,
        label: str | None = None,
        expires_at: datetime | None = None,
        created_by: str = "operator",
    ) -> tuple[str, ApiKey]:
        """A new key: (the token to hand over, shown this once; what the home keeps of it)."""
        key_id, secret = secrets.token_hex(8), secrets.token_urlsafe(32)
        now = self.session.clock.now()
        key = new_key(
            key_id,
            secret,
            tenant=tenant,
            user=user,
            agent=agent,
            memory_scopes=memory_scopes,
            sql_scopes=sql_scopes,
            admin=admin,
            label=label,
            now=now,
            expires_at=expires_at,
            created_by=created_by,
        )
        self.keys.add(key, _audit(key, "key_create", created_by, now))
        return token(key_id, secret), key

    def list(self, tenant: str | None = None) -> list[ApiKey]:
        if tenant is not None:
            text(tenant, "tenant")
        return self.keys.list(tenant)

    def revoke(self, key_id: str, *, actor: str = "operator", tenant: str | None = None) -> ApiKey:
        """Revoke a key (``tenant``: only one of that tenant). An unknown key and another tenant's
        key are the same ``NOT_FOUND``."""
        store = self.keys
        key = store.find(key_id) if isinstance(key_id, str) else None
        if key is None or (tenant is not None and key.tenant != tenant):
            raise NotFound("no such API key", key_id=str(key_id))
        now = self.session.clock.now()
        store.revoke(key_id, now, _audit(key, "key_revoke", actor, now))
        with self._lock:
            self._cache.pop(key_id, None)
        return store.find(key_id) or key

    def cached(self, presented: str | None) -> ApiKey | None:
        """As ``authenticate`` for a key looked up before; None for one that is not cached (an
        event loop asks this first: reading the store may wait behind a write's lock)."""
        key_id, secret = parse_token(presented)
        with self._lock:
            key = self._cache.get(key_id)
        return None if key is None else check(key, secret, self.session.clock.now())

    def authenticate(self, presented: str | None) -> ApiKey:
        """The key a request presents, if it stands; else ``Unauthenticated`` (one answer for a
        missing, malformed, unknown, wrong, revoked or expired key)."""
        key_id, secret = parse_token(presented)
        with self._lock:
            key = self._cache.get(key_id)
        if key is None:
            key = self.keys.find(key_id)
            if key is not None:
                with self._lock:
                    if len(self._cache) >= _CACHE_LIMIT:
                        self._cache.clear()
                    self._cache[key_id] = key
        return check(key, secret, self.session.clock.now())


def _audit(key: ApiKey, op: str, actor: str, at: datetime) -> AuditEntry:
    return AuditEntry(
        at=at,
        tenant=key.tenant,
        scope=Scope.TENANT.value,
        owner_id=key.tenant,
        key=f"api_key:{key.key_id}",
        op=op,
        version_ids="",
        content_sha256=None,
        actor=actor,
    )
