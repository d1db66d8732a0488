# One command per job; each builds its own virtual environment from the pins.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat constraints.txt pyproject.toml | sha256sum | cut -c1-12)

LAB_STAMP := $(VENV)/.lab-$(shell cat constraints.txt pyproject.toml | sha256sum | cut -c1-12)
TORCH_STAMP := $(VENV)/.torch-$(shell cat constraints.txt pyproject.toml | sha256sum | cut -c1-12)

.PHONY: test test-fast evidence check lint bench lab clean

$(STAMP): constraints.txt pyproject.toml
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt setuptools wheel
	$(BIN)/pip install --quiet --disable-pip-version-check --no-build-isolation \
		-c constraints.txt -e '.[test,dev]'
	touch $(STAMP)

# Every test, spread over one pytest-xdist worker per core (TEST_WORKERS=0: in this process),
# a test module's tests on one worker so that its module fixtures (g++ builds, LocalClusters,
# mutant runs) are built once; ARGS goes on to pytest (make test ARGS="-x tests/evidence").
TEST_WORKERS ?= auto
XDIST := -n $(TEST_WORKERS) --dist loadscope

test: $(STAMP)
	$(BIN)/python -m pytest $(XDIST) $(ARGS)

# The edit loop: no slow test, no test that starts processes (CLI runs, gate children,
# worker pools, notebooks, compilers, Chromium), no 2^32 sweep. make test runs all of them.
FAST_ARGS := -m "not slow" \
	--ignore=tests/meta --ignore=tests/notebooks --ignore=tests/cuda \
	--ignore=tests/test_cluster.py --ignore=tests/test_evidence_dask.py --ignore=tests/test_cli.py --ignore=tests/chains/test_cli_gf.py \
	--ignore=tests/evidence/test_render_chromium.py --ignore=tests/gemm/order/test_numpy_order.py \
	--ignore=tests/gemm/test_bench.py \
	--deselect=tests/gates/test_g3.py::test_cli_g3_with_a_callable_all_gates_and_json \
	--deselect=tests/gates/test_gq.py::test_the_port_passes_gq_and_the_record_counts_it \
	--deselect=tests/mutants/test_harness.py::test_mutate_cli_json_has_the_fixed_fields \
	--deselect=tests/mutants/test_harness.py::test_catalogue_is_killed_with_margin_and_strengthening_is_recorded \
	--deselect=tests/mutants/test_equivalence.py::test_every_justified_entry_passes_the_probe_screen_and_says_it_is_a_screen \
	--deselect=tests/exhaustive/test_exhaustive.py::test_process_workers_give_the_same_record \
	--deselect=tests/exhaustive/test_exhaustive.py::test_ml_dtypes_agrees_outside_the_nan_class \
	--deselect=tests/codecs/test_boundaries.py::test_random_float64_twins_agree \
	--deselect=tests/codecs/test_mx_formats.py::test_three_evaluations_of_the_scan_agree \
	--deselect=tests/detect/test_enumeration_vs_brute.py::test_brute_force_on_a_dense_range_with_a_pool \
	--deselect=tests/chains/test_exp_design.py::test_the_tables_are_the_searches_output \
	--deselect=tests/chains/test_recipes.py::test_each_port_passes_gf_against_its_recipe \
	--deselect=tests/schemes/test_rules.py::test_nvfp4_block_scales_port_agrees_with_reference \
	--deselect=tests/refs/test_exact_float.py::test_exp_and_exp2_on_random_float32

test-fast: $(STAMP)
	$(BIN)/python -m pytest $(XDIST) $(FAST_ARGS) $(ARGS)

# The optional torch extra (accumulation_order's torch rows, issue 14). Where the pinned torch
# cannot be installed the notebook says torch is absent in its table; the run goes on.
$(TORCH_STAMP): $(STAMP)
	if $(BIN)/pip install --quiet --disable-pip-version-check --no-build-isolation \
		-c constraints.txt -e '.[test,dev,torch]'; then touch $(TORCH_STAMP); \
	else echo "make evidence: torch could not be installed; its notebook rows will say torch is absent"; fi

# The notebook-free proofs, then every notebook (codec_atlas shows the fresh proofs run's
# records instead of proving them twice); both always run. prove exits 3 when G2 is only
# PENDING (no GPU), which is not a failure here.
evidence: $(STAMP) $(TORCH_STAMP)
	$(BIN)/fp8lab prove; p=$$?; $(BIN)/fp8lab evidence; e=$$?; \
	test $$e -eq 0 || exit $$e; test $$p -eq 0 || test $$p -eq 3

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
