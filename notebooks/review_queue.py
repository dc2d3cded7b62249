import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="Review queue")


@app.cell
def _():
    import os

    import marimo as mo

    from memory_core import Memory
    from memory_core.environment import resolve_home
    from memory_core.identity import reviewer_identity

    return Memory, mo, os, resolve_home, reviewer_identity


@app.cell
def _(mo, os, resolve_home):
    # The home comes from `-- --home PATH`, else $MEMCORE_HOME, else ./.memory. It is read
    # read-only; a decision opens it for writing for that one write (a running pipeline makes
    # that fail: decide again after it).
    home = resolve_home(mo.cli_args().get("home") or os.environ.get("MEMCORE_HOME"))
    mo.stop(
        not (home / "memory.duckdb").exists(),
        mo.md(f"**No memory home at `{home}`.** Pass `-- --home PATH` or set `MEMCORE_HOME`."),
    )
    get_version, set_version = mo.state(0)
    return get_version, home, set_version


@app.cell
def _(Memory, get_version, home, mo):
    get_version()  # read again after each decision
    with Memory.open(home, read_only=True, create=False) as _memory:
        spaces = _memory.store.versions.conflicted_namespaces()
    choices = [" / ".join(s) for s in spaces]
    where = mo.ui.dropdown(choices, value=choices[0] if choices else None, label="tenant / scope / owner")
    mo.vstack(
        [mo.md(f"# Review queue\n\nMemory home `{home}`: {len(spaces)} namespace(s) with conflicted rows."), where]
    )
    return (where,)


@app.cell
def _(Memory, get_version, home, mo, reviewer_identity, where):
    get_version()
    mo.stop(where.value is None, mo.md("Nothing to review: no row is flagged conflicted."))
    tenant, scope, owner_id = where.value.split(" / ")
    identity = reviewer_identity(tenant, scope, owner_id)
    with Memory.open(home, read_only=True, create=False) as _memory:
        items = _memory.for_run(identity).review_queue(scope=scope)
    pairs = [
        {
            "key": i.key,
            "value": i.value,
            "peer": p["key"],
            "peer_value": p["value"],
            "judges": "; ".join(
                f"{r['verdict']} {r['confidence']:.2f} ({r['judge']}): {r['reason']}"
                for r in i.reasons
                if r["peer_key"] in (p["key"], i.key)
            ),
        }
        for i in items
        for p in i.peers
    ]
    table = mo.ui.table(pairs, selection="single", label="flagged pairs: pick one")
    table
    return identity, scope, table


@app.cell
def _(mo, table):
    mo.stop(not table.value, mo.md("Pick a pair to decide on it."))
    pair = table.value[0]
    retire = mo.ui.run_button(label=f"Retire {pair['peer']} (keep {pair['key']})")
    clear = mo.ui.run_button(label="Clear the flag (both stand)")
    undo = mo.ui.run_button(label=f"Restore {pair['peer']} (undo its retirement)")
    mo.hstack([retire, clear, undo])
    return clear, pair, retire, undo


@app.cell
def _(Memory, clear, home, identity, mo, pair, retire, scope, set_version, undo):
    mo.stop(not (retire.value or clear.value or undo.value))
    with Memory.open(home) as _memory:
        _tool = _memory.for_run(identity, origin="notebooks.review_queue")
        if undo.value:
            _done = _tool.restore(pair["peer"], scope=scope).to_dict()
        else:
            _done = _tool.resolve_conflict(
                pair["key"], pair["peer"], "retire_peer" if retire.value else "clear", scope=scope
            ).to_dict()
    set_version(lambda n: n + 1)
    mo.md(f"Done: `{_done}`")
    return


if __name__ == "__main__":
    app.run()
