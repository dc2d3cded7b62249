"""The home the benchmark works on: ``--facts`` facts spread over 16 users of 4 tenants, built
once with ``bulk_set`` and an optimized index, and cached by size and embedder (a marker file
records its layout); each run works on a fresh copy of it, with one API key per client made in
the copy before the service starts. Also the identities: which tenant and user a client is, and
how many of the facts each identity holds."""

from __future__ import annotations

import json
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

TENANTS, USERS_PER_TENANT = 4, 4
IDENTITIES = TENANTS * USERS_PER_TENANT
HOME_MARKER = "bench_service_home.json"
HOME_LAYOUT = 2  # 2: the index optimized after the bulk write (ANN and bitmap indexes, FTS folded)


def identity_names(i: int) -> tuple[str, str]:
    return f"tenant-{i // USERS_PER_TENANT}", f"user-{i % USERS_PER_TENANT}"


def facts_per_user(facts: int) -> list[int]:
    """How many of the ``facts`` each identity holds (the first ones take the remainder)."""
    base, extra = divmod(facts, IDENTITIES)
    return [base + (1 if i < extra else 0) for i in range(IDENTITIES)]


def make_embedder_for(name: str, cache: Path) -> Any:
    from memory_core.adapters.embedders import make_embedder

    return make_embedder(name, cache_dir=cache)


def build_home(home: Path, facts: int, embedder: str, cache: Path) -> dict[str, Any]:
    """A fresh home of ``facts`` facts over the 16 identities: one ``bulk_set`` per user, then the
    index optimized as an operator would (``optimize_index``): the appended rows folded into the
    full-text index and, past 50,000 rows, the IVF vector index and the bitmap prefilters built.
    Without it a recall at 100k facts scans every vector (about 48 ms against 8 ms at p50)."""
    from evals.bench_search import sentences
    from memory_core import Identity, Memory

    if home.exists():
        shutil.rmtree(home)
    home.parent.mkdir(parents=True, exist_ok=True)
    texts = sentences(facts, seed=31)
    started = time.perf_counter()
    counts = facts_per_user(facts)
    offset = 0
    with Memory.open(home, embedder=make_embedder_for(embedder, cache)) as memory:
        for i, n in enumerate(counts):
            tenant, user = identity_names(i)
            tool = memory.for_run(Identity(tenant=tenant, user=user, agent="bench"), origin="bench.build")
            entries = [{"key": f"fact{j}", "value": texts[offset + j]} for j in range(n)]
            offset += n
            if entries:
                tool.bulk_set(entries)
        memory.flush()
        bulk_s = time.perf_counter() - started
        optimized = memory.projector.optimize()
    layout = {
        "layout": HOME_LAYOUT,
        "facts": facts,
        "embedder": embedder,
        "per_user": counts,
        "built_at": datetime.now(timezone.utc).isoformat(),
        "build_s": time.perf_counter() - started,
        "bulk_s": bulk_s,
        "index": optimized,
    }
    (home / HOME_MARKER).write_text(json.dumps(layout, indent=2))
    return layout


def cached_home(home: Path, facts: int, embedder: str, cache: Path, log) -> dict[str, Any]:
    marker = home / HOME_MARKER
    if marker.exists():
        layout = json.loads(marker.read_text())
        if layout.get("facts") == facts and layout.get("embedder") == embedder and layout.get("layout") == HOME_LAYOUT:
            log(f"reusing the built home {home} ({facts:,} facts, {embedder})")
            return layout
    log(f"building a home of {facts:,} facts with the {embedder} embedder in {home} ...")
    layout = build_home(home, facts, embedder, cache)
    log(f"  built in {layout['build_s']:.1f} s (bulk_set {layout['bulk_s']:.1f} s, then the index optimized)")
    return layout


def make_keys(home: Path, clients: int) -> list[dict[str, Any]]:
    """One API key per client (the client's identity: its user, agent ``bench``), made before the
    service starts. A client beyond the 16 identities shares a user and owns a slice of its facts."""
    from memory_core import Memory

    specs = []
    with Memory.open(home) as memory:
        for c in range(clients):
            tenant, user = identity_names(c % IDENTITIES)
            token, record = memory.keys.create(tenant=tenant, user=user, agent="bench", label=f"bench_service c{c}")
            specs.append({"client": c, "tenant": tenant, "user": user, "token": token, "key_id": record.key_id})
    return specs


def fresh_copy(built: Path, folder: Path, clients: int, log) -> tuple[Path, list[dict[str, Any]]]:
    """A copy of the built home for one run, with an API key per client made in it."""
    started = time.perf_counter()
    home = folder / "home"
    shutil.copytree(built, home)
    keys = make_keys(home, clients)
    log(f"copied the home to {home} and made {clients} API keys in {time.perf_counter() - started:.1f} s")
    return home, keys


def drop(folder: Path, keep: bool) -> None:
    if not keep:
        shutil.rmtree(folder, ignore_errors=True)


def key_identity(spec: dict[str, Any]) -> Any:
    from memory_core import Identity

    return Identity(tenant=spec["tenant"], user=spec["user"], agent="bench")
