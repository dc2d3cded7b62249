"""A small home for the lens explorer: the ready-made roster in a tenant (``acme``), and claims about
the checkout service that ``agent:bob`` (ana's agent) captured through two lenses, a plain fact,
and a decision trace: one subject that each lens shows differently."""

from __future__ import annotations

import tomllib
from importlib import resources

from memory_core import Identity, Memory


def fill_lens_home(memory: Memory, tenant: str = "acme") -> None:
    roster = tomllib.loads((resources.files("memory_core.substrate") / "rosters" / "seven.toml").read_text())
    roster["assignments"] = {"developer": ["agent:bob"], "analyst": ["agent:bob"]}
    memory.for_run(Identity(tenant=tenant, user="root", admin=True)).lens_roster_load(roster)
    bob = memory.for_run(Identity(tenant=tenant, user="ana", agent="bob", session="s1"))
    bob.capture("checkout-service", "checkout retries the payment call once", lens_id="developer")
    bob.capture("checkout-service", "checkout p95 latency is 420 ms", lens_id="analyst", entity_type="metric")
    bob.set("checkout-owner", "team Atlas owns the checkout service", subject="checkout-service")
    bob.decide("act", "raised the checkout timeout to 30 s", lens_id="developer")
