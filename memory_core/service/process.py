"""What ``memcore serve`` does to the process it owns once the home is open and warm, and nothing
else does (a library embedded in someone's process leaves its threads and collector alone):

- **One BLAS thread.** NumPy's OpenBLAS starts a worker per core, and after each call a worker
  spins for a while before it sleeps. The service calls BLAS every few milliseconds (peer checks,
  recent index rows), so its workers hardly ever slept: under ``bench_service``'s load they burned
  a third of a core of the two, doing nothing. The arrays are small; one thread is as fast.
- **Long-lived objects frozen.** A served home keeps hundreds of thousands of objects (each
  namespace's live facts, the index's columns), and each full collection walked them all: 200 to
  350 ms with every thread stopped, a few times a minute under load. After a full collection the
  survivors are moved out of the collector's sight (``gc.freeze``), so the next one walks only what
  outlived the young generations since: 15 to 25 ms. What is frozen is still freed when its last
  reference goes; only a reference cycle formed among frozen objects later is never collected.

docs/service.md, "The process"; the measurements in docs/benchmarks.md.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator


@dataclass(frozen=True, slots=True)
class ProcessTuning:
    """What ``tune_process`` did: the BLAS libraries limited (and to how many threads), and
    whether the collector freezes the survivors of each full collection."""

    blas_libraries: tuple[str, ...]
    blas_threads: int | None
    freezes_survivors: bool


def _limit_blas(threads: int) -> tuple[tuple[str, ...], Any]:
    """Every BLAS library loaded in this process (NumPy's, SciPy's) limited to ``threads``: the
    names of those found, and the limits (to restore them). Without ``threadpoolctl`` (the
    service extra installs it): none."""
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        return (), None
    limits = threadpool_limits(limits=threads, user_api="blas")  # applied now, until restored
    names = {str(lib.get("internal_api")) for lib in threadpool_info() if lib.get("user_api") == "blas"}
    return tuple(sorted(names)), limits


def _freeze_after_full_collection(phase: str, info: dict[str, Any]) -> None:
    if phase == "stop" and info.get("generation") == 2:
        gc.freeze()  # right after a full collection every tracked object is reachable


def freeze_survivors() -> None:
    """Freeze what is alive now (after one full collection), and the survivors of every full
    collection from here on. Installed once however often it is called."""
    gc.collect()
    gc.freeze()
    if _freeze_after_full_collection not in gc.callbacks:
        gc.callbacks.append(_freeze_after_full_collection)


def stop_freezing() -> None:
    """Undo ``freeze_survivors``: the frozen objects are the collector's again."""
    if _freeze_after_full_collection in gc.callbacks:
        gc.callbacks.remove(_freeze_after_full_collection)
    gc.unfreeze()


def _tune(blas_threads: int | None, freeze: bool) -> tuple[ProcessTuning, Any]:
    libraries, limits = _limit_blas(blas_threads) if blas_threads is not None else ((), None)
    if freeze:
        freeze_survivors()
    return ProcessTuning(libraries, blas_threads if libraries else None, freeze), limits


def tune_process(*, blas_threads: int | None = 1, freeze: bool = True) -> ProcessTuning:
    """The service's process set up as the module says, for the rest of its life; ``None`` /
    False leave that part alone."""
    return _tune(blas_threads, freeze)[0]


@contextmanager
def tuned_process(*, blas_threads: int | None = 1, freeze: bool = True) -> Iterator[ProcessTuning]:
    """``tune_process`` for a while, undone after: for a benchmark that runs the library as the
    service does inside a process that goes on to do other things (a test runner)."""
    tuning, limits = _tune(blas_threads, freeze)
    try:
        yield tuning
    finally:
        if freeze:
            stop_freezing()
        if limits is not None:
            limits.restore_original_limits()
