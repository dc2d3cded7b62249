import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="Evaluation report")


@app.cell
def _():
    import os
    from pathlib import Path

    import marimo as mo

    from evals.reports import calibration_rows, coref_rows, load_reports, locomo_rows
    from memory_core.environment import resolve_home

    return Path, calibration_rows, coref_rows, load_reports, locomo_rows, mo, os, resolve_home


@app.cell
def _(load_reports, mo, os, resolve_home):
    # The home comes from `-- --home PATH`, else $MEMCORE_HOME, else ./.memory. Only report files
    # are read (the store is not opened), so a pipeline may be writing meanwhile.
    home = resolve_home(mo.cli_args().get("home") or os.environ.get("MEMCORE_HOME"))
    reports = load_reports(home)
    found = [n for n, r in reports.items() if not r.get("missing")]
    mo.md(
        f"# Evaluation report\n\nMemory home `{home}`: {len(found)} of {len(reports)} reports present "
        f"({', '.join(found) or 'none'})."
    )
    return (reports,)


@app.cell
def _(Path, locomo_rows, mo, reports):
    _r = reports["locomo"]
    if _r.get("missing"):
        _out = mo.md(f"## LoCoMo recall@k\n\nNot run yet: `{_r['command']}` writes `{_r['path']}`.")
    else:
        _parts = [
            mo.md(
                f"## LoCoMo recall@k\n\nData `{_r['data_file']}` ({_r['licence']}), "
                f"{_r['conversations']} conversations; report `{_r['path']}`."
            ),
            mo.ui.table(locomo_rows(_r), selection=None, label="recall@k per run and category"),
        ]
        if _r.get("plot") and Path(_r["plot"]).exists():
            _parts.append(mo.image(src=Path(_r["plot"]).read_bytes(), width=640))
        _out = mo.vstack(_parts)
    _out
    return


@app.cell
def _(coref_rows, mo, reports):
    _r = reports["coref"]
    if _r.get("missing"):
        _out = mo.md(f"## Per-span versus whole-batch extraction\n\nNot run yet: `{_r['command']}`.")
    else:
        _source = _r["licence"] or f"synthetic only ({_r['mudoco_skipped']})"
        _out = mo.vstack(
            [
                mo.md(
                    f"## Per-span versus whole-batch extraction (McNemar)\n\nData: {_source}. "
                    f"Resolver: {_r['resolver']}."
                ),
                mo.ui.table(coref_rows(_r), selection=None, label="accuracy and discordant pairs"),
            ]
        )
    _out
    return


@app.cell
def _(mo, reports):
    _r = reports["observations"]
    if _r.get("missing"):
        _out = mo.md(f"## Extraction recall against LoCoMo observations\n\nNot run yet: `{_r['command']}`.")
    else:
        _c = _r["calibration"]
        _out = mo.vstack(
            [
                mo.md(
                    f"## Extraction recall against LoCoMo observations\n\nData `{_r['data_file']}`; "
                    f"embedder {_r['embedder']}; tau {_c['tau']} (calibrated on {_c['pairs']} pairs)."
                ),
                mo.ui.table(_r["results"], selection=None, label="recall per extractor"),
            ]
        )
    _out
    return


@app.cell
def _(Path, calibration_rows, mo, reports):
    _r = reports["resolver"]
    if _r.get("missing"):
        _out = mo.md(f"## Conflict resolver calibration\n\nNot run yet: `{_r['command']}`.")
    else:
        _parts = [
            mo.md(
                f"## Conflict resolver calibration\n\nJudge {_r['judge']}, {_r['pairs']} labelled pairs "
                f"({_r['labels']}); LoCoMo pairs: {_r['locomo']}. Lowest confidence reaching precision "
                f"{_r['target_precision']}: retire {_r['retire_threshold']}, flag {_r['flag_threshold']}."
            ),
            mo.ui.table(calibration_rows(_r), selection=None, label="precision per confidence band"),
        ]
        if Path(_r["plot"]).exists():
            _parts.append(mo.image(src=Path(_r["plot"]).read_bytes(), width=480))
        _out = mo.vstack(_parts)
    _out
    return


if __name__ == "__main__":
    app.run()
