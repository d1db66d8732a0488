# One command per job; each builds its own virtual environment from the pins.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat constraints.txt pyproject.toml | sha256sum | cut -c1-12)

LAB_STAMP := $(VENV)/.lab-$(shell cat constraints.txt pyproject.toml | sha256sum | cut -c1-12)
TORCH_STAMP := $(VENV)/.torch-$(shell cat constraints.txt pyproject.toml | sha256sum | cut -c1-12)

# Idle OpenMP and OpenBLAS threads sleep at once rather than spin (a setting of yours wins): on
# a few shared cores a spinning thread holds the core that the other test worker, notebook or
# proof pass is waiting for. Neither changes a result.
export OMP_WAIT_POLICY ?= PASSIVE
export OPENBLAS_THREAD_TIMEOUT ?= 4

.PHONY: setup test test-fast test-bare coverage evidence check lint bench lab docs clean

# fp8lab's byte code, compiled here as an installer compiles an installed package's: the
# package is installed editable, so where PYTHONDONTWRITEBYTECODE is set no process writes it
# and every process that imports fp8lab (CLI runs, kernel processes, pool workers, notebook
# kernels) would compile the same sources again. Only sources changed since are recompiled;
# a source that does not compile is named here and left to the job that imports it.
BYTECODE := $(BIN)/python -m compileall -q -j 0 fp8lab || true

# fp8lab's numba loops, compiled once into their disk cache beside the sources (a fresh
# checkout has none, and its first test run, proof or notebook would compile them, a process
# at a time). Warming changes no result; where it fails, the loops compile on first use.
WARM := $(BIN)/python -m fp8lab.bench.warm || echo "make: numba loops not warmed; they compile on first use"

$(STAMP): constraints.txt pyproject.toml
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt setuptools wheel
	$(BIN)/pip install --quiet --disable-pip-version-check --no-build-isolation \
		-c constraints.txt -e '.[test,dev]'
	$(BYTECODE)
	$(WARM)
	touch $(STAMP)

# Only the environment: .venv with fp8lab and its pinned dependencies (the quickest way to
# check a kernel of your own: .venv/bin/fp8lab gates ...).
setup: $(STAMP)

# Every test, spread over one pytest-xdist worker per core (TEST_WORKERS=0: in this process),
# a test module's tests on one worker so that its module fixtures (g++ builds, LocalClusters,
# mutant runs) are built once; ARGS goes on to pytest (make test ARGS="-x tests/evidence").
TEST_WORKERS ?= auto
XDIST := -n $(TEST_WORKERS) --dist loadscope

test: $(STAMP) $(TORCH_STAMP)
	$(BYTECODE)
	$(BIN)/python -m pytest $(XDIST) $(ARGS)

# The edit loop: every test but the slow ones, those that start processes (CLI runs, gate
# children, worker pools, compilers, clusters, Chromium) and those that run notebooks, as the
# tests' own marks say (pyproject.toml lists them). make test runs all of them.
FAST_ARGS := -m "not slow and not process and not notebook"

test-fast: $(STAMP)
	$(BYTECODE)
	$(BIN)/python -m pytest $(XDIST) $(FAST_ARGS) $(ARGS)

# Every notebook's smoke run from a non-editable install without extras (make test runs
# those whose rows need an extra; tests/integration/test_no_extras.py).
test-bare: $(STAMP)
	$(BYTECODE)
	FP8LAB_BARE_ALL=1 $(BIN)/python -m pytest $(XDIST) tests/integration/test_no_extras.py $(ARGS)

# Line coverage of fp8lab/ by the whole suite (make test's tests, run under coverage.py;
# the processes they start are measured too): the total, then per file in
# build/coverage/report.txt. Slower than make test (every line is traced).
coverage: $(STAMP) $(TORCH_STAMP)
	rm -rf build/coverage && mkdir -p build/coverage
	$(BYTECODE)
	$(BIN)/python -m coverage run -m pytest $(XDIST) $(ARGS); s=$$?; \
	$(BIN)/python -m coverage combine --quiet; \
	$(BIN)/python -m coverage report > build/coverage/report.txt; \
	echo "line coverage of fp8lab/: $$($(BIN)/python -m coverage report --format=total)%"; exit $$s

# The optional torch, triton, ecosystem and gemm extras (accumulation_order's torch rows; Triton
# kernels on the CPU: the triton_interpreter notebook; torchao's and compressed-tensors'
# quantizers under their rules, the CPU GEMMs of torch, onnxruntime and jax, and ONNX's
# QuantizeLinear and Cast by its reference implementation and onnxruntime: the ecosystem
# notebook, whose rows then say the library is absent). Where the pinned wheels cannot be
# installed the torch rows say torch is absent, the torch and Triton tests skip, and the
# triton_interpreter notebook's verdicts are PENDING, naming the install line.
$(TORCH_STAMP): $(STAMP)
	if $(BIN)/pip install --quiet --disable-pip-version-check --no-build-isolation \
		-c constraints.txt -e '.[test,dev,torch,triton,ecosystem,gemm,onnx]'; then touch $(TORCH_STAMP); \
	else echo "make: torch or triton could not be installed; their rows and tests say so"; fi

# The notebook-free proofs (the default plan, then the MX plan), then every notebook
# (codec_atlas shows the fresh proofs run's records instead of proving them twice); all
# always run, so the front page never shows one of them stale. prove exits 3 when G2 is
# only PENDING (no GPU), which is not a failure here.
evidence: $(STAMP) $(TORCH_STAMP)
	$(BYTECODE)
	$(BIN)/fp8lab prove; p=$$?; $(BIN)/fp8lab prove --plan mx --quiet; x=$$?; \
	$(BIN)/fp8lab evidence; e=$$?; \
	test $$e -eq 0 || exit $$e; test $$x -eq 0 || exit $$x; test $$p -eq 0 || test $$p -eq 3

$(LAB_STAMP): $(STAMP)
	$(BIN)/pip install --quiet --disable-pip-version-check --no-build-isolation \
		-c constraints.txt -e '.[test,dev,lab]'
	touch $(LAB_STAMP)

# Jupyter refuses to run as root unless told; containers often are root.
LAB_ARGS ?= $(if $(filter 0,$(shell id -u)),--allow-root,)

lab: $(LAB_STAMP)
	$(BIN)/jupyter lab notebooks $(LAB_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

check: lint test

# The manual, built into site/ (MkDocs, strict: a broken link or reference fails the build).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

bench: $(STAMP)
	$(BIN)/fp8lab bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site
