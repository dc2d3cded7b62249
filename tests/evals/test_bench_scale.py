"""The scale benchmark runs end to end in a few seconds a cell: every shape's services start,
client processes write and search through them with no error, and the Markdown report says where
each shape stops. Only that it works is asserted; the figures are the benchmark's to report."""

import pytest

from evals.bench_scale import main
from tests.pg import pg_server_url


@pytest.mark.slow  # about 80 s on the 2-core host: four service starts and 18 cells
def test_tiny_run_reports_every_shape_without_errors(tmp_path):
    server = pg_server_url()
    result = main(
        ["--seconds", "0.5", "--clients", "1,2", "--points", "10", "--pg", server, "--out", str(tmp_path / "r.json")]
    )
    cells = result["cells"]
    assert {(c["shape"], c["mode"], c["clients"]) for c in cells} == {
        (shape, mode, n) for shape in ("duckdb", "pg x1", "pg x2") for mode in ("write", "search") for n in (1, 2)
    }
    assert all(c["errors"] == 0 and c["ops"] > 0 for c in cells), [
        (c["shape"], c["mode"], c["first_error"]) for c in cells
    ]
    assert result["points"]["ratio"] > 0
    markdown = result["markdown"]
    assert "| pg x2 | search | 2 |" in markdown and "global write lock" in markdown
    assert (tmp_path / "r.json").exists()
