# Two commands on a fresh machine: `make run` and `make test`. Each builds .venv when missing.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export DAGSTER_HOME := $(CURDIR)/.dagster
export MEMCORE_HOME ?= $(CURDIR)/.memory

.PHONY: run test lint test-slow ui install clean chromium screenshots

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[platform,test]'
	touch $(STAMP)

install: $(STAMP)

$(DAGSTER_HOME)/dagster.yaml: dagster.yaml
	mkdir -p $(DAGSTER_HOME)
	cp dagster.yaml $(DAGSTER_HOME)/dagster.yaml

# Materialize the main asset graph in-process on the embedded default, then say where results are.
run: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/python -m assets.run

# The suite on two worker processes (pytest-xdist): every test has its own home, database or
# schema, and the serial run took 21 minutes on two cores against 12 this way. 0: one process.
# Each file's tests run on one worker, in order: a module's shared fixture (the fuzz's home, the
# CLI's service) then sees them as a serial run does.
PYTEST_WORKERS ?= 2

test: $(STAMP) chromium lint
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile

# Formatting and lint rules (ruff), then the import contracts between the layers (import-linter).
lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/lint-imports

# Headless Chromium for the notebook checks: Debian's package, installed when missing and possible.
chromium:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && \
	  { apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && \
	    apt-get install -y -q chromium >/dev/null 2>&1; }; }; } || \
	  echo "note: chromium could not be installed; the notebook browser checks will say they were skipped"

# README screenshots: the notebooks (against the home `make run` filled) and the Dagster asset graph.
screenshots: $(STAMP) chromium $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/python -m tools.screenshots --home $(MEMCORE_HOME) --out docs/screenshots

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

# The Dagster UI on 127.0.0.1:3000.
ui: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/dagster dev -m assets.definitions -h 127.0.0.1 -p 3000

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache .import_linter_cache
