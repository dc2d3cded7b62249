import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="Fact timeline")


@app.cell
def _():
    import os

    import marimo as mo

    from evals.figures import timeline as timeline_figure
    from memory_core import MemcoreError, Memory, Namespace, Scope
    from memory_core import history_view as view
    from memory_core.client import RemoteMemory
    from memory_core.environment import resolve_home, resolve_service

    return (
        Memory,
        MemcoreError,
        Namespace,
        RemoteMemory,
        Scope,
        mo,
        os,
        resolve_home,
        resolve_service,
        timeline_figure,
        view,
    )


@app.cell
def _(Memory, MemcoreError, RemoteMemory, mo, os, resolve_home, resolve_service):
    # Through a memory service: `-- --url URL --key KEY` (or $MEMCORE_URL, $MEMCORE_KEY; an admin
    # key), read while agents write. Else the home: `-- --home PATH`, else $MEMCORE_HOME, else
    # ./.memory, opened read-only (a pipeline writing the home at the same time makes that fail).
    _args = mo.cli_args()
    url, _key = resolve_service(_args.get("url"), _args.get("key"))
    url = None if _args.get("home") and not _args.get("url") else url  # --home beats $MEMCORE_URL
    if url:
        mo.stop(not _key, mo.md(f"**The memory service at `{url}` needs an admin key:** `--key` or `MEMCORE_KEY`."))
        source = RemoteMemory(url, _key)
        try:
            catalog = source.catalog()
        except MemcoreError as _refused:
            mo.stop(True, mo.md(f"**The memory service at `{url}` refused:** `{_refused.code}` {_refused}"))
        history_of, judged_in, where = source.history, source.resolver_records, f"Memory service `{url}`"
    else:
        home = resolve_home(_args.get("home") or os.environ.get("MEMCORE_HOME"))
        mo.stop(
            not (home / "memory.duckdb").exists(),
            mo.md(f"**No memory home at `{home}`.** Pass `-- --home PATH` (or `-- --url URL`) or set `MEMCORE_HOME`."),
        )
        source = Memory.open(home, read_only=True, create=False)
        catalog = source.store.inspection.catalog()
        history_of, judged_in = source.store.versions.history, source.store.ledger.resolver_records
        where = f"Memory home `{home}`"
    mo.md(f"# Fact timeline\n\n{where}: {len(catalog)} keys.")
    return catalog, history_of, judged_in


@app.cell
def _(catalog, mo):
    owners = sorted({f"{t} / {s} / {o}" for t, s, o, _ in catalog})
    owner = mo.ui.dropdown(owners, value=owners[0] if owners else None, label="tenant / scope / subject")
    owner
    return (owner,)


@app.cell
def _(catalog, mo, owner):
    keys = sorted(k for t, s, o, k in catalog if f"{t} / {s} / {o}" == owner.value)
    key = mo.ui.dropdown(keys, value=keys[0] if keys else None, label="key")
    key
    return (key,)


@app.cell
def _(Namespace, Scope, history_of, key, mo, owner, view):
    mo.stop(owner.value is None or key.value is None, mo.md("Nothing to show: the home holds no keys."))
    tenant, scope, owner_id = owner.value.split(" / ")
    history = history_of(Namespace(tenant, Scope(scope), owner_id), key.value)
    valid_edges, written = view.instants(history)
    as_of = mo.ui.slider(
        0, max(len(valid_edges) - 1, 0), value=max(len(valid_edges) - 1, 0), label="as_of (what was true then)"
    )
    known_at = mo.ui.slider(
        0, max(len(written) - 1, 0), value=max(len(written) - 1, 0), label="known_at (what the store believed then)"
    )
    mo.vstack([as_of, known_at])
    return as_of, history, known_at, valid_edges, written


@app.cell
def _(as_of, history, known_at, mo, timeline_figure, valid_edges, view, written):
    at = valid_edges[as_of.value]
    known = written[known_at.value]
    answer = view.true_at(view.believed_at(history, known), at)
    said = f"**{view.short_value(answer)}**" if answer else "*nothing*"
    mo.vstack(
        [
            mo.md(f"As of `{at.isoformat()}`, as the store believed at `{known.isoformat()}`: {said}"),
            timeline_figure(history, as_of=at, known_at=known),
        ]
    )
    return


@app.cell
def _(history, mo):
    version = mo.ui.dropdown(
        {f"v{r.version} {r.op.value} ({r.status.value})": r.id for r in history},
        value=f"v{history[-1].version} {history[-1].op.value} ({history[-1].status.value})",
        label="version",
    )
    mo.vstack(
        [
            mo.ui.table(
                [
                    {
                        "version": r.version,
                        "op": r.op.value,
                        "status": r.status.value,
                        "value": r.value_json,
                        "valid_at": r.valid_at.isoformat(),
                        "invalid_at": r.invalid_at.isoformat() if r.invalid_at else "",
                        "written": r.created_at.isoformat(),
                        "by": r.changed_by,
                    }
                    for r in history
                ],
                selection=None,
                label="every version of the key",
            ),
            version,
        ]
    )
    return (version,)


@app.cell
def _(Namespace, Scope, history, judged_in, mo, owner, version, view):
    chosen = next(r for r in history if r.id == version.value)
    _tenant, _scope, _owner_id = owner.value.split(" / ")
    _judged = judged_in(Namespace(_tenant, Scope(_scope), _owner_id))
    mo.ui.table(
        [{"field": k, "value": v} for k, v in view.provenance(chosen, _judged)],
        selection=None,
        label="provenance of the chosen version (and who judged it)",
    )
    return


if __name__ == "__main__":
    app.run()
