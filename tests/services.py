"""The outside services some tests need (PostgreSQL, the RabbitMQ broker), each found by a real
connection with a short timeout.

A test asks for one with ``pg_url_or_skip()`` / ``broker_url_or_skip()``: it gets the URL, or is
skipped with a message naming the environment variable that points at the service. Under CI
(``CI=true``) a missing service fails the test instead: CI starts the services it needs.
"""

from __future__ import annotations

import os

import pytest

PG_ENV = "MEMCORE_TEST_PG_URL"
DEFAULT_PG_URL = "postgresql://postgres@127.0.0.1:5432/postgres"  # trust auth on the loopback
BROKER_ENV = "MEMCORE_TEST_BROKER_URL"
DEFAULT_BROKER_URL = "amqp://guest:guest@127.0.0.1:5672//"
TIMEOUT_S = 3


def _unavailable(env: str, url: str, why: str) -> None:
    message = f"{env}: no service at {redact(url)} ({why}); set {env} to one that answers"
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"CI=true and {message}", pytrace=False)
    pytest.skip(message)


def redact(url: str) -> str:
    """``url`` without its password, for messages."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    return f"{scheme}://{userinfo.split(':', 1)[0]}:***@{host}"


def pg_url_or_skip() -> str:
    """A URL to an existing PostgreSQL database that accepted a connection just now:
    ``$MEMCORE_TEST_PG_URL``, else the local server's ``postgres`` database as user postgres."""
    url = os.environ.get(PG_ENV, "").strip() or DEFAULT_PG_URL
    try:
        import psycopg
    except ImportError as exc:
        _unavailable(PG_ENV, url, f"psycopg is not installed: pip install -e '.[scale]' ({exc})")
    try:
        with psycopg.connect(url, connect_timeout=TIMEOUT_S) as connection:
            connection.execute("select 1").fetchall()
    except psycopg.Error as exc:
        _unavailable(PG_ENV, url, f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''}")
    return url


def broker_url_or_skip() -> str:
    """A URL to an AMQP broker (RabbitMQ) that accepted a connection just now:
    ``$MEMCORE_TEST_BROKER_URL``, else the local RabbitMQ as guest."""
    url = os.environ.get(BROKER_ENV, "").strip() or DEFAULT_BROKER_URL
    try:
        from kombu import Connection
    except ImportError as exc:
        _unavailable(BROKER_ENV, url, f"kombu is not installed: pip install -e '.[scale]' ({exc})")
    try:
        with Connection(url, connect_timeout=TIMEOUT_S) as connection:
            connection.ensure_connection(max_retries=1, timeout=TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - kombu raises the transport's own errors (socket, amqp, auth)
        _unavailable(BROKER_ENV, url, f"{type(exc).__name__}: {exc}")
    return url
