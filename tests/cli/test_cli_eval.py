"""`memcore eval`: the suites the platform registers, and typed errors when one cannot run."""

import json
import subprocess
import sys

from tests.cli.test_cli import run


def test_an_unknown_suite_names_the_installed_ones(home):
    code, doc = run(home, "eval", "nope", identity=())
    assert code == 2 and doc["error"]["code"] == "USAGE"
    for suite in ("coref", "locomo", "observations", "resolver"):
        assert suite in doc["error"]["message"]


def test_an_unknown_run_is_a_usage_error(home):
    code, doc = run(home, "eval", "locomo", "--runs", "bm25_only,nope", identity=())
    assert code == 2 and doc["error"]["code"] == "USAGE"
    assert "nope" in doc["error"]["message"]


def test_a_missing_corpus_says_where_it_looked(tmp_path, home):
    missing = tmp_path / "no-such" / "locomo.json"
    code, doc = run(home, "eval", "locomo", "--data", str(missing), identity=())
    assert code == 1 and doc["error"]["code"] == "DATA_NOT_FOUND"
    assert str(missing) in doc["error"]["message"]
    assert not (home / "reports" / "locomo").exists()


def test_a_corrupt_corpus_is_a_typed_error_not_a_usage_error(tmp_path, home):
    corrupt = tmp_path / "locomo.json"
    corrupt.write_text("{not json")
    code, doc = run(home, "eval", "locomo", "--data", str(corrupt), identity=())
    assert code == 1 and doc["error"]["code"] == "DATA_UNREADABLE"
    assert not (home / "reports" / "locomo").exists()


def test_a_suite_without_its_extra_says_which_to_install(home):
    # A library-only install lacks scipy (the platform extra brings it); a None entry in
    # sys.modules makes the import fail as it would there. A fresh process, so nothing is cached.
    script = (
        "import sys; sys.modules['scipy'] = None\n"
        "from memory_core.cli import main\n"
        f"sys.exit(main(['--home', {str(home)!r}, 'eval', 'coref', '--json']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "EXTRA_MISSING"
    assert "scipy" in error["message"] and "memory_core[platform]" in error["message"]
