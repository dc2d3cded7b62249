"""What an erasure costs: `python -m evals.bench_erasure [--users 20] [--facts 500]`.

A home (hashing embedder, so the index is real and fast to build) holds ``--users`` users of one
tenant with ``--facts`` facts each, written with ``bulk_set``; one user is erased. Printed: each
step's time (from the request's checkpoints), the census's size, and, as a baseline measured in
the same run, the time the bulk writes of the whole home took.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from memory_core import Identity, Memory


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--facts", type=int, default=500)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memcore-bench-erasure-") as tmp:
        with Memory.open(Path(tmp) / "home", embedder="hashing") as memory:
            started = time.perf_counter()
            for u in range(args.users):
                tool = memory.for_run(Identity(tenant="bench", user=f"user{u}"))
                entries = [
                    {"key": f"k{i}", "value": f"user{u} secret number {i} of the bench"} for i in range(args.facts)
                ]
                tool.bulk_set(entries)
            memory.flush()
            write_s = time.perf_counter() - started
            size_mb = (Path(tmp) / "home" / "memory.duckdb").stat().st_size / 1e6
            started = time.perf_counter()
            request = memory.erase("bench", user="user0")
            erase_s = time.perf_counter() - started
            versions = memory.store.erasure.versions(request.request_id)
    steps = []
    for before, after in zip(versions, versions[1:]):
        done = [s for s in after.steps if s not in before.steps] or [after.status.value]
        steps.append((done[0], (after.updated_at - before.updated_at).total_seconds()))  # verified: the census
    rows = args.users * args.facts
    print(f"home: {args.users} users x {args.facts} facts = {rows:,} rows, memory.duckdb {size_mb:.1f} MB")
    print(
        f"erase user0: {request.status.value}, {erase_s:.2f} s; writing the home took {write_s:.2f} s "
        f"({erase_s / write_s:.2f}x)"
    )
    print("  " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in steps))
    print(
        f"  census: {request.residue['census:needles']} needles, {request.residue['census:files_scanned']} files, "
        f"residue {request.residue_count}"
    )


if __name__ == "__main__":
    main()
