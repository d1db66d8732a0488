# One command per job; each builds its own virtual environment from the pins.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat constraints.txt pyproject.toml | sha256sum | cut -c1-12)

LAB_STAMP := $(VENV)/.lab-$(shell cat constraints.txt pyproject.toml | sha256sum | cut -c1-12)

.PHONY: test evidence check lint bench lab clean

$(STAMP): constraints.txt pyproject.toml
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt setuptools wheel
	$(BIN)/pip install --quiet --disable-pip-version-check --no-build-isolation \
		-c constraints.txt -e '.[test,dev]'
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest $(ARGS)

# Every notebook, then the notebook-free proofs; prove exits 3 when G2 is only PENDING (no GPU).
evidence: $(STAMP)
	$(BIN)/fp8lab evidence
	$(BIN)/fp8lab prove || test $$? -eq 3

$(LAB_STAMP): $(STAMP)
	$(BIN)/pip install --quiet --disable-pip-version-check --no-build-isolation \
		-c constraints.txt -e '.[test,dev,lab]'
	touch $(LAB_STAMP)

# Jupyter refuses to run as root unless told; containers often are root.
LAB_ARGS ?= $(if $(filter 0,$(shell id -u)),--allow-root,)

lab: $(LAB_STAMP)
	$(BIN)/jupyter lab notebooks $(LAB_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check fp8lab tests
	$(BIN)/ruff format --check fp8lab tests
	$(BIN)/mypy

check: lint test

bench: $(STAMP)
	$(BIN)/fp8lab bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
