import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full", app_title="Lens explorer")


@app.cell
def _():
    import os

    import marimo as mo

    from memory_core import Identity, MemcoreError, Memory
    from memory_core.client import RemoteMemory
    from memory_core.environment import resolve_home, resolve_service
    from memory_core.wire import encode

    return Identity, MemcoreError, Memory, RemoteMemory, encode, mo, os, resolve_home, resolve_service


@app.cell
def _(Identity, MemcoreError, Memory, RemoteMemory, mo, os, resolve_home, resolve_service):
    # Through a memory service: `-- --url URL --key KEY` (or $MEMCORE_URL, $MEMCORE_KEY): an admin
    # key of the tenant, which may wear any lens. Else the home: `-- --home PATH`, else
    # $MEMCORE_HOME, else ./.memory, as a principal of `-- --tenant T` reading `-- --user U`'s
    # memory. A view writes its interaction record and receipt, so the home is opened for writing
    # while the views are rendered (a pipeline holding it makes that fail: run again after it).
    _args = mo.cli_args()
    url, _key = resolve_service(_args.get("url"), _args.get("key"))
    url = None if _args.get("home") and not _args.get("url") else url  # --home beats $MEMCORE_URL
    tenant, user = _args.get("tenant") or "acme", _args.get("user") or "ana"
    if url:
        mo.stop(not _key, mo.md(f"**The memory service at `{url}` needs an admin key:** `--key` or `MEMCORE_KEY`."))
        _service = RemoteMemory(url, _key)
        try:
            _who = _service.whoami()
        except MemcoreError as _refused:
            mo.stop(True, mo.md(f"**The memory service at `{url}` refused:** `{_refused.code}` {_refused}"))
        tenant, where = _who["tenant"], f"Memory service `{url}`"

        def with_tool(work):
            return work(_service.tool())

    else:
        home = resolve_home(_args.get("home") or os.environ.get("MEMCORE_HOME"))
        mo.stop(
            not (home / "memory.duckdb").exists(),
            mo.md(f"**No memory home at `{home}`.** Pass `-- --home PATH` (or `-- --url URL`) or set `MEMCORE_HOME`."),
        )
        where = f"Memory home `{home}`, tenant `{tenant}`, {user}'s memory"
        _principal = Identity(tenant=tenant, user=user, agent="lens-explorer", admin=True)

        def with_tool(work):
            with Memory.open(home, create=False) as _memory:
                return work(_memory.for_run(_principal, origin="notebooks.lens_explorer"))

    lenses = with_tool(lambda tool: tool.lenses())
    mo.stop(
        not lenses,
        mo.md(
            f"# Lens explorer\n\n{where}: **no lenses in this tenant.** An admin loads a roster with "
            "`memcore --tenant T --admin lens-roster --ready-made seven`."
        ),
    )
    return lenses, where, with_tool


@app.cell
def _(lenses, mo, where):
    _ids = [lens.lens_id for lens in lenses]
    _args = mo.cli_args()
    _first = [i for i in (_args.get("lenses") or "developer,analyst,steward").split(",") if i in _ids] or _ids[:3]
    chosen = mo.ui.multiselect(_ids, value=_first[:3], label="lenses, side by side (two or three)", max_selections=3)
    subject = mo.ui.text(value=_args.get("subject") or "", label="subject (a word of the key, entity or text)")
    mo.vstack([mo.md(f"# Lens explorer\n\n{where}: {len(lenses)} lenses."), mo.hstack([chosen, subject])])
    return chosen, subject


@app.cell
def _(chosen, mo, with_tool):
    mo.stop(not chosen.value, mo.md("Pick a lens or more."))
    views = with_tool(lambda tool: {lens: tool.render(lenses=[lens]) for lens in chosen.value})
    return (views,)


@app.cell
def _(encode, mo, subject, views, with_tool):
    _word = subject.value.strip().lower()

    def _about(item):
        return not _word or _word in f"{item.key} {item.text}".lower()

    def _column(lens, view):
        _rows = [
            {"ref": i.ref, "scope": i.scope, "type": i.entity_type or i.plane, "text": i.text[:90]}
            for i in view.items
            if _about(i)
        ]
        _receipt = view.receipt
        _checked = with_tool(lambda tool: tool.verify_receipt(encode(_receipt)))
        return mo.vstack(
            [
                mo.md(f"### {lens}\n\n{len(_rows)} of {len(view.items)} items shown"),
                mo.ui.table(_rows, selection=None, page_size=12) if _rows else mo.md("_nothing about it_"),
                mo.md(
                    f"**Receipt** `{_receipt.receipt_id}`: {len(_receipt.disclosed)} refs disclosed to "
                    f"`{_receipt.consumer}` at store seq {_receipt.store_seq}, signed with key `{_receipt.key_id}` "
                    f"— {'verifies' if _checked.receipt_id == _receipt.receipt_id else 'does not verify'}"
                ),
            ]
        )

    mo.hstack([_column(lens, view) for lens, view in views.items()], widths="equal", align="start")
    return


@app.cell
def _(lenses, mo):
    _rows = [
        {
            "lens": lens.lens_id,
            "types": ", ".join(lens.contract["entity_types"]),
            "scopes": ", ".join(lens.contract["scopes"]),
            "can": ", ".join(lens.capabilities),
            "reads captures of": ", ".join(lens.contract["cross_lens"]) or "itself",
            "worn by": ", ".join(lens.worn_by),
        }
        for lens in lenses
    ]
    mo.vstack([mo.md("## The contracts"), mo.ui.table(_rows, selection=None)])
    return


if __name__ == "__main__":
    app.run()
