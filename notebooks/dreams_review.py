import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="Dreams review")


@app.cell
def _():
    import os

    import marimo as mo

    from memory_core import MemcoreError, Memory, Namespace, Scope
    from memory_core.environment import resolve_home, resolve_service
    from memory_core.identity import reviewer_identity

    return MemcoreError, Memory, Namespace, Scope, mo, os, resolve_home, resolve_service, reviewer_identity


@app.cell
def _(Memory, mo, os, resolve_home, resolve_service, reviewer_identity):
    # The home: `-- --home PATH`, else $MEMCORE_HOME, else ./.memory, read read-only; a decision
    # opens it for writing for that one write (a running pipeline makes that fail: decide again
    # after it). The memory service has no Dreams review route yet: point this at the home.
    _args = mo.cli_args()
    _url, _ = resolve_service(_args.get("url"), _args.get("key"))
    mo.stop(
        bool(_args.get("url")) or (bool(_url) and not _args.get("home")),
        mo.md(
            f"**Dreams review reads the home itself:** the memory service at `{_url}` has no Dreams "
            "review route yet. Pass `-- --home PATH` on the machine that holds the home."
        ),
    )
    home = resolve_home(_args.get("home") or os.environ.get("MEMCORE_HOME"))
    mo.stop(
        not (home / "memory.duckdb").exists(),
        mo.md(f"**No memory home at `{home}`.** Pass `-- --home PATH` or set `MEMCORE_HOME`."),
    )
    where = f"Memory home `{home}`"

    def reviewer(memory, namespace):
        who = reviewer_identity(namespace.tenant, namespace.scope.value, namespace.owner_id)
        return memory.for_run(who, origin="notebooks.dreams_review")

    def pending():
        with Memory.open(home, read_only=True, create=False) as memory:
            return memory.store.dreams.pending_namespaces()

    def queue_of(namespace):
        with Memory.open(home, read_only=True, create=False) as memory:
            return reviewer(memory, namespace).dream_proposals(scope=namespace.scope)

    def approve(namespace, proposal_id):
        with Memory.open(home) as memory:
            return reviewer(memory, namespace).dream_approve(proposal_id, scope=namespace.scope)

    def reject(namespace, proposal_id, note):
        with Memory.open(home) as memory:
            return reviewer(memory, namespace).dream_reject(proposal_id, scope=namespace.scope, note=note or None)

    get_version, set_version = mo.state(0)
    return approve, get_version, pending, queue_of, reject, set_version, where


@app.cell
def _(get_version, mo, pending, where):
    get_version()  # read again after each decision
    spaces = pending()
    choices = [f"{s.tenant} / {s.scope.value} / {s.owner_id}" for s in spaces]
    chosen = mo.ui.dropdown(choices, value=choices[0] if choices else None, label="tenant / scope / owner")
    mo.vstack(
        [
            mo.md(
                f"# Dreams review\n\n{where}: {len(spaces)} namespace(s) with pending proposals. A proposal "
                "changes nothing until it is approved; approval re-reads its targets and refuses if one "
                "changed since the pass (the proposal goes stale)."
            ),
            chosen,
        ]
    )
    return (chosen,)


@app.cell
def _(Namespace, Scope, chosen, get_version, mo, queue_of):
    get_version()
    mo.stop(chosen.value is None, mo.md("Nothing to review: no Dreams proposal is pending."))
    _tenant, _scope, _owner_id = chosen.value.split(" / ")
    namespace = Namespace(_tenant, Scope(_scope), _owner_id)

    def _change(p):
        c = p.change
        if p.kind == "merge":
            return f"write {c['key']}: {c['text']}"
        if p.kind == "retire":
            kept = {t.ident: t.key for t in p.targets}
            return f"retire {kept[c['retire']]}, keep {kept[c['keep']]}"
        if p.kind == "age_out":
            return f"tombstone {p.targets[0].key}"
        return f"write note {c['key']}: {c['text']}"

    rows = [
        {
            "proposal": p.proposal_id,
            "kind": p.kind,
            "confidence": round(p.confidence, 2),
            "targets": "; ".join(f"{t.key or t.ident}: {t.text}" if t.text else (t.key or t.ident) for t in p.targets),
            "change": _change(p),
            "rationale": p.rationale,
        }
        for p in queue_of(namespace)
    ]
    table = mo.ui.table(rows, selection="single", label="pending proposals: pick one")
    table
    return namespace, table


@app.cell
def _(mo, table):
    mo.stop(not table.value, mo.md("Pick a proposal to approve or reject it."))
    chosen_proposal = table.value[0]
    note = mo.ui.text(label="why (recorded with a rejection)", full_width=True)
    approve_button = mo.ui.run_button(label=f"Approve {chosen_proposal['proposal']} (apply it)")
    reject_button = mo.ui.run_button(label="Reject it")
    mo.vstack(
        [
            mo.md(f"**{chosen_proposal['kind']}**: {chosen_proposal['change']}\n\n{chosen_proposal['rationale']}"),
            note,
            mo.hstack([approve_button, reject_button]),
        ]
    )
    return approve_button, chosen_proposal, note, reject_button


@app.cell
def _(MemcoreError, approve, approve_button, chosen_proposal, mo, namespace, note, reject, reject_button, set_version):
    mo.stop(not (approve_button.value or reject_button.value))
    try:
        if approve_button.value:
            _done = approve(namespace, chosen_proposal["proposal"])
        else:
            _done = reject(namespace, chosen_proposal["proposal"], note.value)
        _said = f"Done: `{_done.proposal_id}` is **{_done.status}** ({len(_done.applied)} row(s) written)."
    except MemcoreError as _refused:
        _said = f"**Refused:** `{_refused.code}` {_refused}"
    set_version(lambda n: n + 1)
    mo.md(_said)
    return


if __name__ == "__main__":
    app.run()
