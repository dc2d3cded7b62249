"""The fuzz test's part for the memory service's verbs (serve, keys, mcp): plausible and garbage
values of their arguments, and a stand-in for ``memory_core.service.serve`` that returns at once
instead of serving until a signal."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from memory_core import Memory
from tests.fuzz_values import BAD_TEXT, NEAR_TEXT

TEXT = st.sampled_from(["ana", "berlin", "k1", "é中文"])
NEAR = st.one_of(NEAR_TEXT, BAD_TEXT, st.sampled_from(["-x", "--", "1e400", "nan", "-1"]))
INSTANT_NEAR = st.sampled_from(["2024-01-01T00:00:00", "soon", "9999-12-31T23:59:59-05:00", "2000-01-01T00:00:00Z"])
SCOPES = (st.sampled_from(["agent,user,tenant", "user"]), st.one_of(st.sampled_from(["team", ","]), NEAR))

SERVICE_VALUES: dict[str, tuple[st.SearchStrategy, st.SearchStrategy]] = {
    "host": (st.sampled_from(["127.0.0.1", "localhost"]), st.one_of(st.just("no-such-host.invalid"), NEAR)),
    "port": (st.just("0"), st.sampled_from(["-1", "65536", "x", "1e3"])),
    "max_body_bytes": (st.just("1048576"), st.sampled_from(["0", "-5", "x"])),
    "request_timeout": (st.just("5"), st.sampled_from(["0", "-1", "nan", "inf", "x"])),
    "rate_limit": (st.sampled_from(["0", "50"]), st.sampled_from(["-1", "nan", "x"])),
    "rate_burst": (st.just("10"), st.sampled_from(["0", "x"])),
    "drain_timeout": (st.just("1"), st.sampled_from(["-1", "inf", "x"])),
    "upkeep_interval": (st.sampled_from(["0", "0.05"]), st.sampled_from(["-1", "nan", "inf", "x"])),
    "webhook_interval": (st.sampled_from(["0", "1"]), st.sampled_from(["-1", "nan", "inf", "x"])),
    "webhook_lease": (st.sampled_from(["1", "60"]), st.sampled_from(["0", "-1", "nan", "inf", "x"])),
    "resident_vectors_mb": (
        st.sampled_from(["0", "0.5", "256", str(2**30)]),
        st.sampled_from(["-1", "nan", "inf", "x", str(2**30 + 1)]),
    ),
    "blas_threads": (st.sampled_from(["0", "1", "2"]), st.sampled_from(["-1", "x", "1.5"])),
    # KEY_ID is optional (keys revoke takes it, create and list do not): a list of at most one.
    "key_id": (st.lists(st.just("0123456789abcdef"), max_size=1), st.lists(NEAR, min_size=1, max_size=1)),
    "key_tenant": (st.sampled_from(["acme", "beta"]), st.one_of(st.just("_global"), NEAR)),
    "key_user": (TEXT, NEAR),
    "key_agent": (TEXT, NEAR),
    "memory_scopes": SCOPES,
    "sql_scopes": SCOPES,
    "expires": (st.just("2999-01-01T00:00:00Z"), INSTANT_NEAR),
    "label": (TEXT, st.one_of(NEAR, st.just("x" * 201))),
    "url": (st.just("http://127.0.0.1:9"), st.one_of(st.just("ftp://x"), NEAR)),  # nothing listens on port 9
    "api_key": (st.just("mck_0123456789abcdef_" + "a" * 43), NEAR),
}


def _serve_once(home, *, host, port, settings, embedder, access_log, announce, **embedder_options):
    """``memory_core.service.serve`` without the serving: it opens the home and binds as the
    service does (so a held home or a port it cannot take is refused as there), announces, and
    returns."""
    from memory_core.service.server import bind

    with Memory.open(home, embedder=embedder, **embedder_options):
        bind(host, port).close()
        announce({"url": f"http://{host}:0", "pid": 0, "home": str(home)})


@pytest.fixture(autouse=True)
def serve_returns(monkeypatch):
    """The fuzzed ``serve`` returns at once instead of serving until a signal."""
    try:
        import memory_core.service
    except ImportError:  # no service extra: serve answers EXTRA_MISSING, which is typed
        return
    monkeypatch.setattr(memory_core.service, "serve", _serve_once)
