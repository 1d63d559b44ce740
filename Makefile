# The two commands the README opens with. Both work on a fresh machine: they create .venv,
# install the project (and for tests: the test clients from PyPI, npm and Debian), then run.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: serve test check install install-test install-dev bench native

# Each install runs only when its inputs changed since the last one (a stamp file in the venv
# records it), so `make serve` on a ready venv starts at once and quietly. `rm .venv/.installed-*`
# forces a reinstall; deleting .venv starts over.
STAMP := $(VENV)/.installed

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP)-run: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	@touch $@

$(STAMP)-test: pyproject.toml scripts/install_test_deps.sh interop/js/package-lock.json | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,verify]'
	bash scripts/install_test_deps.sh
	@touch $@ $(STAMP)-run

# pytest and the verifier's libraries too: mypy checks the pytest plugin and the verifier
# against their own types (numpy's), so the gate sees what the tests run.
$(STAMP)-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev,pytest,verify]'
	@touch $@

install: $(STAMP)-run
install-test: $(STAMP)-test
install-dev: $(STAMP)-dev

# The gate: lint, format, and types (protocol/ and storage/ at mypy --strict, the rest at
# mypy's default strictness). CI runs it before the tests.
check: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict protocol storage
	$(BIN)/mypy coordinator

# Optional: the hot paths compiled by mypyc (the dev extra; needs a C compiler), each module into
# _<name>_native*.so next to its source (scripts/build_native.py lists them: the storage kernels
# and the commit path's record encoding). Without them the same source runs as Python;
# KGC_NATIVE=0 ignores them at run time, `rm` the .so to go back for good.
native: install-dev
	$(BIN)/python scripts/build_native.py

serve: install
	$(BIN)/kgc serve $(ARGS)

# The suite on TEST_WORKERS parallel workers (pytest-xdist): most interop tests wait on real
# clients, so a worker more than the cores keeps them busy; conftest.py keeps the Spark tests on
# one worker. TEST_WORKERS=0 runs it in this one process. pytest exits 5 when it collected no
# tests: that is a failure here, not a pass.
TEST_WORKERS ?= 3
test: install-test
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "no tests were collected: failing"; exit 1; fi; exit $$status
