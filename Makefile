# Two commands do all the set-up on a fresh machine: `make test` and `make demo`.
SHELL := /bin/bash
VENV ?= .venv
FEM := $(VENV)/bin/fem
PY := $(VENV)/bin/python
STAMP := $(VENV)/.fem-ready
DEMO_CASE ?= cases/portal_frame
DEMO_OUT ?= results/demo

# Debian's petsc4py lives under /usr/lib/petscdir; without the petsc-dev package there is no
# /usr/lib/petsc alternative, so point at the real-number build here (fem also finds it on its own).
PETSC_DIR ?= $(lastword $(sort $(wildcard /usr/lib/petscdir/petsc*/*-real)))
SLEPC_DIR ?= $(lastword $(sort $(wildcard /usr/lib/slepcdir/slepc*/*-real)))
ifneq ($(PETSC_DIR),)
export PETSC_DIR
endif
ifneq ($(SLEPC_DIR),)
export SLEPC_DIR
endif

.PHONY: env test demo validate info bench images docs clean

env: $(STAMP)

$(STAMP): pyproject.toml scripts/setup_env.sh
	scripts/setup_env.sh $(VENV)
	@touch $(STAMP)

# The suite runs on TEST_WORKERS processes (pytest-xdist), a module to a worker so that module
# fixtures are built once; BLAS keeps to one thread per worker (tiny dense solves are slower
# threaded, and two workers already fill a 2-core machine).
TEST_WORKERS ?= 2

test: env
	$(VENV)/bin/ruff check fem tests benchmarks scripts cases
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadscope

demo: env
	@mkdir -p $(dir $(DEMO_OUT))
	$(FEM) run $(DEMO_CASE)/deck.toml -o $(DEMO_OUT).h5
	$(FEM) validate $(notdir $(DEMO_CASE))
	@echo "results: $(abspath $(DEMO_OUT).h5)"
	@echo "ParaView: $(abspath $(DEMO_OUT).xdmf)"

validate: env
	$(FEM) validate

info: env
	$(FEM) info

bench: env
	$(PY) -m benchmarks

# the docs (docs/: Sphinx and MyST from the docs extra), warnings as errors; the deck reference
# pages are written from the schema at each build (docs/_ext/fem_docs.py), never committed.
# The validation page's table is the report of every case (fem validate --report), run first:
# about 5 min here (50 cases: 5.3 min of CPU on one core, 6.8 min wall on the busy 2-core
# machine); a case that FAILs (exit 1) shows as FAIL on the page, any other error stops the build.
docs: env
	@mkdir -p docs/_build/validation
	OPENBLAS_NUM_THREADS=1 $(FEM) validate --report docs/_build/validation \
		> docs/_build/validation/table.txt || [ $$? -eq 1 ]
	@tail -n 2 docs/_build/validation/table.txt
	$(PY) -m sphinx -W --keep-going -q -b html -d docs/_build/doctrees docs docs/_build/html
	@echo "docs: $(abspath docs/_build/html/index.html)"

# the docs' pictures of the sweeps (docs/images/), from cases/jeffcott_rotor and a column
images: env
	OPENBLAS_NUM_THREADS=1 $(PY) scripts/rotor_images.py

clean:
	rm -rf $(VENV) results .pytest_cache docs/_build docs/deck docs/_generated
