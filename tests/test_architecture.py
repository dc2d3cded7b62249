"""What the architecture promises that a reader can check without running the tool: modules stay
small, MemoryTool is one explicit class, no attribute is reached around a declaration, and the
import contracts make no exceptions."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from memory_core import MemoryTool

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("memory_core", "assets", "evals", "corpora", "tools", "notebooks", "tests")
MAX_LINES = 400


def test_no_module_is_over_400_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, long


def test_the_tool_is_one_explicit_class():
    assert MemoryTool.__mro__ == (MemoryTool, object)


def test_no_attribute_is_reached_around_its_declaration():
    marker = "type: ignore[" + "attr-defined]"
    found = [str(p) for p in (ROOT / "memory_core").rglob("*.py") if marker in p.read_text(encoding="utf-8")]
    assert found == []


def test_the_import_contracts_make_no_exception():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    contracts = config["contracts"]
    expected = {"layers", "pure-domain", "product-not-platform", "independent-services", "sql-in-adapters"}
    assert {c["id"] for c in contracts} == expected
    assert not any("ignore_imports" in c for c in contracts)
    assert config["exclude_type_checking_imports"] is False


def test_commands_that_never_search_do_not_import_the_index_engine():
    # lancedb takes about a second to import; the index is opened (and imported) on first use.
    script = "import sys, memory_core, memory_core.cli; print('lancedb' in sys.modules, 'psycopg' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False False"  # nor the PostgreSQL driver: only a --store asks for it
