"""The service benchmark's quick mode runs end to end: a real service subprocess on 127.0.0.1,
client processes over HTTP, SIGTERM, and every acknowledged write read back. Only correctness is
asserted here (no error, no lost write); the latency targets are the benchmark's to report."""

import json

from evals.bench_service import main


def test_quick_run_has_no_errors_and_loses_no_write(tmp_path):
    out = tmp_path / "result.json"
    report = main(
        [
            "--quick",
            "--facts",
            "500",
            "--clients",
            "2",
            "--seconds",
            "3",
            "--baseline-seconds",
            "1",
            "--embedder",
            "hashing",
            "--home",
            str(tmp_path / "built"),
            "--out",
            str(out),
            "--quiet",
            "--floor-httpx",
        ]
    )
    assert report["targets"]["zero errors"]["pass"], report["runs"]
    assert report["targets"]["zero lost writes"]["pass"], report["writes"]
    assert report["writes"]["checked"] > 0
    assert report["service_stop"]["clean"], report["service_stop"]
    for run in ("inproc_1", "http_1", "http_n"):
        assert report["runs"][run]["ops"] > 0
    assert report["runs"]["http_n"]["clients"] == 2
    assert json.loads(out.read_text())["facts"] == 500
    # each p95 comes with its interval (None: too few ops for one)
    for run in ("inproc_1", "http_1", "http_n"):
        for op, figures in report["runs"][run]["per_op"].items():
            interval = figures["p95_interval_ms"]
            assert (interval is None) == (figures["n"] < 72), (run, op, figures)
            assert interval is None or interval[0] <= figures["p95_ms"] <= interval[1]
    # The bare round trip ran at both concurrencies, and each get's overhead is split against it.
    assert report["runs"]["floor_n"]["clients"] == 2 and report["runs"]["floor_n"]["error_count"] == 0
    for run, split in report["floor"].items():
        assert split["floor_ms"] > 0 and abs(split["added_ms"] - split["floor_ms"] - split["stack_ms"]) < 1e-9, run
    assert set(report["floor"]) == {"http_1", "http_n_window"}
    # and once more through httpx, the wire RemoteMemory(transport=...) takes
    assert report["runs"]["floor_n_httpx"]["clients"] == 2 and report["runs"]["floor_n_httpx"]["error_count"] == 0
    assert report["runs"]["floor_n_httpx"]["ops"] > 0
