"""The service benchmark's quick mode runs end to end: a real service subprocess on 127.0.0.1,
client processes over HTTP, SIGTERM, and every acknowledged write read back. Only correctness is
asserted here (no error, no lost write); the latency targets are the benchmark's to report."""

import json

import pytest

from evals.bench_service import main
from evals.service_load.paired import paired_deltas

QUICK = ["--quick", "--facts", "500", "--clients", "2", "--embedder", "hashing", "--quiet"]


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
            "--blocks",
            "2",
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
    assert set(report["floor"]) == {"http_1", "http_n"}
    # and once more through httpx, the wire RemoteMemory(transport=...) takes
    assert report["runs"]["floor_n_httpx"]["clients"] == 2 and report["runs"]["floor_n_httpx"]["error_count"] == 0
    assert report["runs"]["floor_n_httpx"]["ops"] > 0

    # Interleaved by default: each side of a pair ran in the same blocks with the same plans, as
    # long as the other, and each block's own p50s are kept beside the pair's deltas.
    assert report["blocks"] == 2
    for run in ("inproc_1", "http_1", "inproc_n", "http_n"):
        assert len(report["runs"][run]["blocks"]) == 2, run
    assert report["runs"]["inproc_n"]["wall_s"] >= 1.5 and report["runs"]["http_n"]["wall_s"] >= 1.5  # of 3 s
    assert report["runs"]["inproc_n"]["verdicts"] == report["runs"]["http_n"]["verdicts"]
    assert set(report["paired"]) == {"http_1", "http_n"}
    assert report["paired"]["http_1"]["get"]["blocks_ms"]


def test_paired_deltas_are_per_block_and_their_median():
    blocks = [
        {"inproc": {"set": {"n": 5, "p50_ms": 10.0}}, "http": {"set": {"n": 5, "p50_ms": 11.0}}},
        {"inproc": {"set": {"n": 5, "p50_ms": 20.0}}, "http": {"set": {"n": 5, "p50_ms": 24.0}}},
        {"inproc": {"set": {"n": 5, "p50_ms": 9.0}}, "http": {"set": {"n": 5, "p50_ms": 8.5}}},
        {"inproc": {"get": {"n": 5, "p50_ms": 1.0}}, "http": {}},  # an op one side never ran
    ]
    deltas = paired_deltas(blocks)
    assert set(deltas) == {"set"}
    assert deltas["set"]["blocks_ms"] == [1.0, 4.0, -0.5]
    assert deltas["set"]["median_ms"] == 1.0


@pytest.mark.slow
def test_the_sequential_order_still_runs(tmp_path):
    report = main(
        [*QUICK, "--seconds", "3", "--baseline-seconds", "1", "--home", str(tmp_path / "built"), "--sequential"]
        + ["--out", str(tmp_path / "r.json")]
    )
    assert report["targets"]["zero errors"]["pass"] and report["targets"]["zero lost writes"]["pass"]
    assert report["blocks"] is None and "http_n_window" in report["runs"]
