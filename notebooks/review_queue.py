import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="Review queue")


@app.cell
def _():
    import os

    import marimo as mo

    from memory_core import MemcoreError, Memory, Namespace, Scope
    from memory_core.client import RemoteMemory
    from memory_core.environment import resolve_home, resolve_service
    from memory_core.identity import reviewer_identity

    return (
        MemcoreError,
        Memory,
        Namespace,
        RemoteMemory,
        Scope,
        mo,
        os,
        resolve_home,
        resolve_service,
        reviewer_identity,
    )


@app.cell
def _(MemcoreError, Memory, RemoteMemory, mo, os, resolve_home, resolve_service, reviewer_identity):
    # Through a memory service: `-- --url URL --key KEY` (or $MEMCORE_URL, $MEMCORE_KEY; an admin
    # key, recorded as the reviewer), while agents write. Else the home: `-- --home PATH`, else
    # $MEMCORE_HOME, else ./.memory, read read-only; a decision opens it for writing for that one
    # write (a running pipeline makes that fail: decide again after it).
    _args = mo.cli_args()
    url, _key = resolve_service(_args.get("url"), _args.get("key"))
    url = None if _args.get("home") and not _args.get("url") else url  # --home beats $MEMCORE_URL
    if url:
        mo.stop(not _key, mo.md(f"**The memory service at `{url}` needs an admin key:** `--key` or `MEMCORE_KEY`."))
        service = RemoteMemory(url, _key)
        try:
            _admin = service.whoami()["admin"]
        except MemcoreError as _refused:
            mo.stop(True, mo.md(f"**The memory service at `{url}` refused:** `{_refused.code}` {_refused}"))
        mo.stop(
            not _admin, mo.md(f"**The memory service at `{url}` refused:** `ADMIN_REQUIRED` review needs an admin key")
        )
        conflicted, queue_of = service.conflicted_namespaces, service.review_queue
        decide, undo = service.resolve_conflict, service.restore
        where = f"Memory service `{url}`"
    else:
        home = resolve_home(_args.get("home") or os.environ.get("MEMCORE_HOME"))
        mo.stop(
            not (home / "memory.duckdb").exists(),
            mo.md(f"**No memory home at `{home}`.** Pass `-- --home PATH` (or `-- --url URL`) or set `MEMCORE_HOME`."),
        )
        where = f"Memory home `{home}`"

        def reviewer(memory, namespace):
            who = reviewer_identity(namespace.tenant, namespace.scope.value, namespace.owner_id)
            return memory.for_run(who, origin="notebooks.review_queue")

        def conflicted():
            with Memory.open(home, read_only=True, create=False) as memory:
                return memory.store.versions.conflicted_namespaces()

        def queue_of(namespace):
            with Memory.open(home, read_only=True, create=False) as memory:
                return reviewer(memory, namespace).review_queue(scope=namespace.scope)

        def decide(namespace, key, peer_key, decision):
            with Memory.open(home) as memory:
                return reviewer(memory, namespace).resolve_conflict(key, peer_key, decision, scope=namespace.scope)

        def undo(namespace, key):
            with Memory.open(home) as memory:
                return reviewer(memory, namespace).restore(key, scope=namespace.scope)

    get_version, set_version = mo.state(0)
    return conflicted, decide, get_version, queue_of, set_version, undo, where


@app.cell
def _(conflicted, get_version, mo, where):
    get_version()  # read again after each decision
    spaces = conflicted()
    choices = [" / ".join(s) for s in spaces]
    chosen = mo.ui.dropdown(choices, value=choices[0] if choices else None, label="tenant / scope / owner")
    mo.vstack([mo.md(f"# Review queue\n\n{where}: {len(spaces)} namespace(s) with conflicted rows."), chosen])
    return (chosen,)


@app.cell
def _(Namespace, Scope, chosen, get_version, mo, queue_of):
    get_version()
    mo.stop(chosen.value is None, mo.md("Nothing to review: no row is flagged conflicted."))
    _tenant, _scope, _owner_id = chosen.value.split(" / ")
    namespace = Namespace(_tenant, Scope(_scope), _owner_id)
    items = queue_of(namespace)
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
    return namespace, table


@app.cell
def _(mo, table):
    mo.stop(not table.value, mo.md("Pick a pair to decide on it."))
    pair = table.value[0]
    retire = mo.ui.run_button(label=f"Retire {pair['peer']} (keep {pair['key']})")
    clear = mo.ui.run_button(label="Clear the flag (both stand)")
    restore = mo.ui.run_button(label=f"Restore {pair['peer']} (undo its retirement)")
    mo.hstack([retire, clear, restore])
    return clear, pair, restore, retire


@app.cell
def _(clear, decide, mo, namespace, pair, restore, retire, set_version, undo):
    mo.stop(not (retire.value or clear.value or restore.value))
    if restore.value:
        _done = undo(namespace, pair["peer"]).to_dict()
    else:
        _done = decide(namespace, pair["key"], pair["peer"], "retire_peer" if retire.value else "clear").to_dict()
    set_version(lambda n: n + 1)
    mo.md(f"Done: `{_done}`")
    return


if __name__ == "__main__":
    app.run()
