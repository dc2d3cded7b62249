"""The mechanism of the validation boundary (``validate.py`` holds the rules): a class's public
ops wrapped so that each binds and checks its arguments before it runs a line."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Collection, Mapping

from ..errors import InvalidInput
from ..inputs import MAX_DEPTH, check_tree, known_options

# A rule checks one argument: (value, its name, whether None is its default) -> None or raise.
Rule = Callable[[Any, str, bool], None]
Lookup = Callable[[str, str], "Rule | None"]  # (op, argument) -> its rule


def _signature_error(op: str, signature: inspect.Signature, kwargs: Mapping[str, Any], exc: TypeError) -> InvalidInput:
    params = signature.parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        known = [n for n, p in params.items() if n not in ("self", "cls") and p.kind is not p.VAR_POSITIONAL]
        try:
            known_options(kwargs, known, op)
        except InvalidInput as unknown:
            return unknown
    return InvalidInput(f"{op}: {exc}", field=op)


class _Binder:
    """Arguments by name, as ``inspect.Signature.bind`` gives them but about ten times faster on
    the path every call takes; a call that does not fit is handed to ``bind`` for its message."""

    def __init__(self, signature: inspect.Signature) -> None:
        params = list(signature.parameters.values())[1:]  # not self / cls
        named = [p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        self.positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
        self.named = {p.name for p in named}
        self.required = {p.name for p in named if p.default is p.empty}
        self.var_keyword = next((p.name for p in params if p.kind is p.VAR_KEYWORD), None)

    def bind(self, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any] | None:
        """The arguments by name, or None when the call does not fit the signature."""
        if len(args) > len(self.positional):
            return None
        given = dict(zip(self.positional, args))
        extra = {}
        for name, value in kwargs.items():
            if name in given:
                return None
            if name in self.named:
                given[name] = value
            elif self.var_keyword is not None:
                extra[name] = value
            else:
                return None
        if not self.required <= given.keys():
            return None
        if self.var_keyword is not None:
            given[self.var_keyword] = extra
        return given


def guarded(
    fn: Callable[..., Any], lookup: Lookup, own_depth: Mapping[str, int], batches: Collection[str]
) -> Callable[..., Any]:
    """``fn`` with its arguments checked first. ``own_depth``: the levels an argument adds above
    the values it carries; ``batches``: arguments whose rule walks them entry by entry."""
    signature = inspect.signature(fn)
    binder = _Binder(signature)
    op = fn.__name__
    checks = [
        (name, param.default is None, lookup(op, name), MAX_DEPTH + own_depth.get(name, 0), name in batches)
        for name, param in list(signature.parameters.items())[1:]  # not self / cls
    ]

    @functools.wraps(fn)
    def op_with_checks(owner: Any, *args: Any, **kwargs: Any) -> Any:
        given = binder.bind(args, kwargs)
        if given is None:
            try:  # the call does not fit: Python's own binding says why, before the op ran a line
                signature.bind(owner, *args, **kwargs)
            except TypeError as exc:
                raise _signature_error(op, signature, kwargs, exc) from None
            raise InvalidInput(f"{op}: the arguments do not fit its signature", field=op)
        for name, nullable, rule, depth, batch in checks:
            if name in given:
                value = given[name]
                if not batch:
                    check_tree(value, name, depth)
                if rule is not None:
                    rule(value, name, nullable)
        return fn(owner, *args, **kwargs)

    return op_with_checks


def own_arguments(given: dict[str, Any]) -> dict[str, Any]:
    """A method's own arguments (``locals()`` on its first line), handed to its service as they are."""
    return {name: value for name, value in given.items() if name != "self"}


def _ops(cls: type) -> list[tuple[str, Any, Callable[..., Any]]]:
    found = []
    for name, member in vars(cls).items():
        fn = member.__func__ if isinstance(member, classmethod) else member
        if not name.startswith("_") and inspect.isfunction(fn):
            found.append((name, member, fn))
    return found


def guard_class(lookup: Lookup, own_depth: Mapping[str, int], batches: Collection[str]) -> Callable[[type], type]:
    """Class decorator: every public method (and classmethod) checks its arguments first."""

    def wrap(cls: type) -> type:
        for name, member, fn in _ops(cls):
            checked = guarded(fn, lookup, own_depth, batches)
            setattr(cls, name, classmethod(checked) if isinstance(member, classmethod) else checked)
        return cls

    return wrap


def uncovered(cls: type, lookup: Lookup) -> list[str]:
    """The ``op.argument`` names of ``cls``'s public ops that no rule covers."""
    return [
        f"{name}.{arg}"
        for name, _, fn in _ops(cls)
        for arg in list(inspect.signature(fn).parameters)[1:]
        if lookup(name, arg) is None
    ]
