"""One client's closed loop, the same in-process and through the service: the op mix
(``--mix``: get, set, recall), what each client works on (its identity's facts, a slice of them
when clients share a user), and the loop itself, which times every op, counts every error by
code, checks read-your-writes and keeps every acknowledged set for the read-back. Only light
imports at module level: client processes are spawned and import this module."""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from typing import Any

from evals.service_load.home import IDENTITIES

OPS = ("get", "set", "recall")
DEFAULT_MIX = "get=45,set=35,recall=20"

SUBJECTS = ["Ana", "Bo", "Chidi", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kemal", "Lena"]
QUESTION_VERBS = ["moved to", "started working at", "visited", "left", "studied music in", "opened a bakery in"]
QUESTION_PLACES = ["Lisbon", "Osaka", "Toronto", "Nairobi", "Lima", "Oslo", "Hanoi", "Austin", "Porto", "Quito"]


def parse_mix(text: str) -> dict[str, float]:
    mix = {op: 0.0 for op in OPS}
    for part in text.split(","):
        name, _, share = part.partition("=")
        if name.strip() not in mix:
            raise SystemExit(f"--mix: unknown op {name!r} (expected {', '.join(OPS)})")
        mix[name.strip()] = float(share)
    total = sum(mix.values())
    if total <= 0:
        raise SystemExit("--mix: the shares must add up to more than 0")
    return {op: share / total for op, share in mix.items()}


def client_plan(
    c: int, clients: int, per_user: list[int], label: str, mix: dict[str, float], seed: int, rate: float = 0.0
) -> dict:
    """What client ``c`` works on: its identity's facts ``fact{j}`` with ``j % slots == slot``; and
    its pace: ``rate`` ops per second, or 0 for a closed loop without think time."""
    identity = c % IDENTITIES
    slots = -(-clients // IDENTITIES)
    return {
        "client": c,
        "facts": per_user[identity],
        "slot": c // IDENTITIES,
        "slots": slots,
        "label": label,
        "mix": mix,
        "seed": seed * 1000 + c,
        "rate": rate,
    }


def client_loop(tool: Any, plan: dict, seconds: float, go: Any = None) -> dict[str, Any]:
    """Run the op mix on ``tool`` for ``seconds`` (after ``go`` is set); every op timed, every error
    counted by code, every acknowledged set kept (key -> value, version id).

    With ``plan["rate"]`` the ops arrive as a Poisson process of that rate (an agent between its
    model's calls) instead of back to back, and each op is timed from when it was due, not from
    when it was sent: a client that fell behind charges the wait to the ops that waited (no
    coordinated omission)."""
    from evals.bench_search import sentences
    from memory_core.errors import MemcoreError

    rng = random.Random(plan["seed"])
    owned = list(range(plan["slot"], plan["facts"], plan["slots"]))
    bodies = sentences(4096, seed=plan["seed"])
    mix = plan["mix"]
    cut_get, cut_set = mix["get"], mix["get"] + mix["set"]
    latency: dict[str, list[float]] = {op: [] for op in OPS}
    begun: dict[str, list[float]] = {op: [] for op in OPS}  # when each timed op began, in s from the start
    late: dict[str, list[float]] = {op: [] for op in OPS}  # paced: from when it was due to when it was sent
    errors: Counter[str] = Counter()
    verdicts: Counter[str] = Counter()
    acked: dict[str, list[Any]] = {}  # key -> [value, version id, order]
    checks = {"read_own_checked": 0, "get_none": 0, "recall_empty": 0}
    prefix = f"{plan['label']}-c{plan['client']}"
    tag = re.sub(r"[^0-9a-z]", "", prefix.lower())
    n = 0
    rate = float(plan.get("rate") or 0.0)
    pace = random.Random(plan["seed"] + 7919)  # its own stream: the ops drawn stay those of a closed loop
    if go is not None:
        go.wait()
    started, cpu = time.perf_counter(), time.process_time()
    end = started + seconds
    due = started + (pace.expovariate(rate) if rate else 0.0)
    while True:
        now = time.perf_counter()
        if now >= end or (rate and due >= end):  # ops still due at the end are not sent
            break
        if rate and due > now:
            time.sleep(due - now)
        n += 1
        draw = rng.random()
        op = "get" if draw < cut_get else "set" if draw < cut_set else "recall"
        try:
            if op == "set":
                if owned and rng.random() < 0.5:
                    key = f"fact{rng.choice(owned)}"
                else:
                    key = f"{prefix}-new{n}"
                # A first word no other value has: no peer pairs with it (bench_service docs). One token:
                # letters and digits only, or the templates would split it and pair its first part.
                value = f"w{tag}x{n} {bodies[n % len(bodies)]}"
                t0 = due if rate else time.perf_counter()
                late["set"].append((time.perf_counter() - t0) * 1000)
                result = tool.set(key, value)
                latency["set"].append((time.perf_counter() - t0) * 1000)
                begun["set"].append(t0 - started)
                verdicts[result.verdict] += 1
                if result.version is not None:
                    acked[key] = [value, result.version.id, n]
            elif op == "get":
                if acked and rng.random() < 0.5:
                    key = rng.choice(list(acked)) if len(acked) < 64 else _recent(acked, rng)
                elif owned:
                    key = f"fact{rng.choice(owned)}"
                else:
                    key = "fact0"
                t0 = due if rate else time.perf_counter()
                late["get"].append((time.perf_counter() - t0) * 1000)
                got = tool.get(key)
                latency["get"].append((time.perf_counter() - t0) * 1000)
                begun["get"].append(t0 - started)
                expected = acked.get(key)
                if expected is not None:
                    checks["read_own_checked"] += 1
                    if got is None or got.value != expected[0]:
                        errors["STALE_READ"] += 1
                elif got is None:
                    checks["get_none"] += 1
            else:
                query = f"{rng.choice(SUBJECTS)} {rng.choice(QUESTION_VERBS)} {rng.choice(QUESTION_PLACES)}"
                t0 = due if rate else time.perf_counter()
                late["recall"].append((time.perf_counter() - t0) * 1000)
                found = tool.recall(query, k=10)
                latency["recall"].append((time.perf_counter() - t0) * 1000)
                begun["recall"].append(t0 - started)
                if not found.hits:
                    checks["recall_empty"] += 1
        except MemcoreError as exc:
            errors[exc.code] += 1
        except Exception as exc:  # noqa: BLE001 - a benchmark counts every failure by its kind
            errors[type(exc).__name__] += 1
        if rate:
            due += pace.expovariate(rate)
    return {
        "client": plan["client"],
        "wall_s": time.perf_counter() - started,
        "cpu_s": time.process_time() - cpu,  # of this whole process (all its threads)
        "latency_ms": latency,
        "begun_s": begun,
        "late_ms": late,
        "errors": dict(errors),
        "verdicts": dict(verdicts),
        "acked": acked,
        "checks": checks,
    }


def _recent(acked: dict[str, list[Any]], rng: random.Random) -> str:
    """One of the client's acknowledged keys, without copying a long dict on every get."""
    keys = list(acked.keys())[-256:]
    return rng.choice(keys)
