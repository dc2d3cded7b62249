"""One writer of the index table at a time in this process: the projector writes under the
store's lock, a fold on the upkeep thread without it, and Lance would fail one of two writes
that race (``LanceIndex.writing``)."""

from __future__ import annotations

from functools import wraps
from typing import Any, Callable, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])


def one_writer(method: F) -> F:
    """Run a method that writes the table under ``LanceIndex.writing`` (see there)."""

    @wraps(method)
    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self.writing:
            return method(self, *args, **kwargs)

    return cast(F, locked)
