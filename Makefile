# The two commands the README opens with. Both work on a fresh machine: they create .venv,
# install the project (and for tests: the test clients from PyPI, npm and Debian), then run.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: serve test check install install-test install-dev bench

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet -e .

install-test: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,verify]'
	bash scripts/install_test_deps.sh

install-dev: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'

# The gate: lint, format, and types (protocol/ and storage/ at mypy --strict, the rest at
# mypy's default strictness). CI runs it before the tests.
check: install-dev
	$(BIN)/ruff check .
	$(BIN)/mypy --strict protocol storage
	$(BIN)/mypy coordinator

serve: install
	$(BIN)/kgc serve $(ARGS)

# pytest exits 5 when it collected no tests: that is a failure here, not a pass.
test: install-test
	$(BIN)/pytest $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "no tests were collected: failing"; exit 1; fi; exit $$status
