"""`memcore eval`: the suites the platform registers, and typed errors when one cannot run."""

import json
import subprocess
import sys

from memory_core.cli import main


def run_eval(home, *args):
    out: list[str] = []
    code = main(["--home", str(home), "eval", *args, "--json"], out=out.append)
    assert len(out) == 1, out
    return code, json.loads(out[0])


def test_an_unknown_suite_names_the_installed_ones(tmp_path):
    code, doc = run_eval(tmp_path / "home", "nope")
    assert code == 2 and doc["error"]["code"] == "USAGE"
    for suite in ("coref", "locomo", "observations", "resolver"):
        assert suite in doc["error"]["message"]


def test_a_missing_corpus_says_where_it_looked(tmp_path):
    missing = tmp_path / "no-such" / "locomo.json"
    code, doc = run_eval(tmp_path / "home", "locomo", "--data", str(missing))
    assert code == 1 and doc["error"]["code"] == "DATA_NOT_FOUND"
    assert str(missing) in doc["error"]["message"]
    assert not (tmp_path / "home" / "reports" / "locomo").exists()


def test_a_suite_without_its_extra_says_which_to_install(tmp_path):
    # A library-only install lacks scipy (the platform extra brings it); a None entry in
    # sys.modules makes the import fail as it would there. A fresh process, so nothing is cached.
    script = (
        "import sys; sys.modules['scipy'] = None\n"
        "from memory_core.cli import main\n"
        f"sys.exit(main(['--home', {str(tmp_path / 'home')!r}, 'eval', 'coref', '--json']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "EXTRA_MISSING"
    assert "scipy" in error["message"] and "memory_core[platform]" in error["message"]
