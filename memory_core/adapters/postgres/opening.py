"""A store URL, and opening the authority it names with every failure typed.

``postgresql://user@host:port/database?schema=NAME``: the database, and the schema in it that
holds one authority (default ``memcore``; tests give each test its own). Every other query
parameter goes to libpq unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
import psycopg_pool

from ...errors import InvalidInput, ServiceUnavailable
from .connection import check_schema_name

SCHEMES = ("postgresql", "postgres")
DEFAULT_SCHEMA = "memcore"


def is_store_url(value: object) -> bool:
    """Does ``value`` name a PostgreSQL authority (rather than a home's own DuckDB file)?"""
    return isinstance(value, str) and value.split("://", 1)[0].lower() in SCHEMES and "://" in value


@dataclass(frozen=True, slots=True)
class StoreUrl:
    conninfo: str  # what libpq connects with (the URL without ``schema``)
    schema: str

    @property
    def shown(self) -> str:
        """The URL without a password, for messages and logs."""
        parts = urlsplit(self.conninfo)
        host = parts.hostname or ""
        user = f"{parts.username}@" if parts.username else ""
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{user}{host}{port}{parts.path}?schema={self.schema}"

    @classmethod
    def parse(cls, url: str) -> "StoreUrl":
        if not is_store_url(url):
            raise InvalidInput(f"a store URL starts with postgresql://, not {url[:40]!r}", field="store")
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
        schemas = [v for k, v in query if k == "schema"]
        schema = schemas[-1] if schemas else DEFAULT_SCHEMA
        try:
            check_schema_name(schema)
        except ValueError as exc:
            raise InvalidInput(str(exc), field="store") from exc
        rest = urlencode([(k, v) for k, v in query if k != "schema"])
        return cls(urlunsplit((parts.scheme, parts.netloc, parts.path, rest, parts.fragment)), schema)


def unreachable(url: StoreUrl, exc: BaseException) -> ServiceUnavailable:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ServiceUnavailable(
        f"the PostgreSQL authority at {url.shown} cannot be reached: {reason}. Check that the server runs "
        "and the URL (--store / MEMCORE_STORE) names it"
    )


UNREACHABLE_ERRORS = (psycopg.OperationalError, psycopg_pool.PoolTimeout)
