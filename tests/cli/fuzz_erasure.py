"""The values the CLI fuzz gives the erasure verbs (erase, erasures, erasure-recover) and the
webhook verbs (webhook-add, -rotate, -remove, webhooks, webhook-deliver, webhook-deliveries)."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.fuzz_values import BAD_TEXT, NEAR_TEXT

NEAR = st.one_of(NEAR_TEXT, BAD_TEXT, st.sampled_from(["-x", "--", ""]))

ERASURE_VALUES = {
    "erase_tenant": (st.sampled_from(["acme", "beta"]), NEAR),
    "erase_user": (st.sampled_from(["ana", "bea"]), NEAR),
    "erase_agent": (st.just("helper"), NEAR),
    "namespaces": (
        st.lists(st.sampled_from(["user/ana", "agent/helper"]), max_size=2),
        st.lists(st.one_of(st.sampled_from(["ana", "global/x", "user/", "planet/x"]), NEAR), min_size=1, max_size=2),
    ),
    "request_id": (st.just("0123456789abcdef"), NEAR),
    "max_attempts": (st.sampled_from(["1", "3"]), st.sampled_from(["0", "-1", "x", "1e9"])),
    # change webhooks (nothing listens on port 9)
    "hook_tenant": (st.sampled_from(["acme", "beta"]), NEAR),
    "hook_url": (st.just("http://127.0.0.1:9/hook"), st.one_of(st.just("ftp://x"), NEAR)),
    "events": (
        st.lists(st.sampled_from(["memory.written", "memory.erased"]), max_size=2),
        st.lists(st.one_of(st.just("memory.exploded"), NEAR), min_size=1, max_size=2),
    ),
    "hook_secret": (st.just("s" * 32), st.one_of(st.just("short"), NEAR)),
    "webhook_id": (st.just("0123456789abcdef"), NEAR),
}
