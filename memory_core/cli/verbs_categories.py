"""Categories and links: a namespace's category taxonomy, assigning rows to categories, operator links between rows."""

from __future__ import annotations

from ..wire import encode
from ..write.categories import DEFAULT_RELATION, Category, MemoryLink
from .registry import Call, Output, arg, verb


def _category_line(c: Category) -> str:
    return f"{c.name} (v{c.version})" + (f": {c.description}" if c.description else "")


def _link_line(e: MemoryLink) -> str:
    def end(key: str, live: bool) -> str:
        return key if live else f"{key} (not live)"

    state = "" if e.state == "linked" else f" [{e.state}]"
    return f"{end(e.key, e.live)} -{e.relation}-> {end(e.other_key, e.other_live)}{state}"


@verb(
    "category-define",
    "define a category of the scope's taxonomy, or change its description",
    arg("category", help="the name: 1 to 64 lower-case letters, digits and _ . : / -"),
    arg("--description", help="what the category holds (at most 500 characters)"),
    writes=True,
)
def category_define(call: Call) -> Output:
    args = call.args
    found = call.tool.category_define(args.category, description=args.description, scope=args.scope)
    return encode(found), _category_line(found), 0


@verb(
    "categories",
    "the scope's category taxonomy; with KEY, the categories that row carries now",
    arg("key", nargs="?", help="a key: only the categories its live row carries"),
)
def categories(call: Call) -> Output:
    args = call.args
    found = call.tool.categories(scope=args.scope, key=args.key)
    empty = f"{args.key}: no categories" if args.key else "(no categories defined)"
    return encode(found), "\n".join(_category_line(c) for c in found) or empty, 0


@verb(
    "assign-category",
    "give the live row at KEY a category of its scope's taxonomy (or take it away: --rescind)",
    arg("category", help="a category the scope defines"),
    arg("--rescind", action="store_true", help="take the category away; imports do not add it back"),
    key=True,
    writes=True,
)
def assign_category(call: Call) -> Output:
    args = call.args
    found = call.tool.assign_category(args.key, args.category, scope=args.scope, rescind=args.rescind)
    return encode(found), f"{found.key}: {found.category} {found.state} (v{found.version})", 0


@verb(
    "link",
    "link the live row at KEY to the live row at OTHER_KEY (an operator edge; --unlink removes it)",
    arg("other_key", help="the other row's key, in the same scope"),
    arg("--relation", default=DEFAULT_RELATION, help=f"what the edge says (default: {DEFAULT_RELATION})"),
    arg("--unlink", action="store_true", help="remove every such edge between the two keys' facts"),
    key=True,
    writes=True,
)
def link(call: Call) -> Output:
    args = call.args
    found = call.tool.link(args.key, args.other_key, relation=args.relation, scope=args.scope, unlink=args.unlink)
    return encode(found), "\n".join(_link_line(e) for e in found), 0


@verb("links", "the operator edges of any fact KEY held, and whether each end is live now", key=True)
def links(call: Call) -> Output:
    args = call.args
    found = call.tool.links(args.key, scope=args.scope)
    return encode(found), "\n".join(_link_line(e) for e in found) or f"{args.key}: no links", 0
