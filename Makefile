# Every target creates or updates .venv first, so a fresh clone needs only Python 3.11 and make.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PROFILE ?= smoke
CANDIDATES ?=
SEARCH_PATH ?=
# PyTorch (the nn extra, seed 002's network) is installed first, as the CPU build: PyPI's Linux
# wheel of the same version pulls several GB of CUDA libraries. Taken from pip's own sources when
# they have it (a local wheel), else from PyTorch's CPU index; its dependencies come with the
# extras. For a GPU:
#   make install TORCH=torch==2.13.0+cu128 TORCH_INDEX=https://download.pytorch.org/whl/cu128
TORCH       ?= torch==2.13.0+cpu
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
EXPERIMENT ?= chapter3

.PHONY: install demo test test-slow mutation mutation-sample lint data figures-chapter2 reproduce-benchmark status bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-deps '$(TORCH)' \
	  || $(PY) -m pip install --quiet --no-deps '$(TORCH)' --index-url $(TORCH_INDEX)
	$(PY) -m pip install --quiet -e '.[dev,chapter5,cluster,nn,tpe,autoweka,optuna,carps]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m experiments.demo

# Test files are spread over up to TEST_JOBS worker processes (pytest-xdist; a file stays on one
# worker, so module fixtures are built once); TEST_JOBS=0 runs them in this process.
TEST_JOBS ?= auto
PARALLEL_PYTEST = $(PY) -m pytest -n $(TEST_JOBS) --maxprocesses 4 --dist loadfile
test: $(STAMP)
	$(PARALLEL_PYTEST)

# The end-to-end tests that take 15 s or more each (fresh processes, whole sweeps, SMAC's GP);
# CI runs them after the default suite.
test-slow: $(STAMP)
	$(PARALLEL_PYTEST) -m slow

# Mutation testing (docs/testing.md): hours on one core, not part of CI. MUTMUT_JOBS workers;
# mutants of the modules in pyproject.toml's [tool.mutmut] only_mutate; prints a score per module.
# One OpenMP/BLAS thread: mutmut forks its workers, and a fork of a process whose OpenMP pool
# (PyTorch's) is running deadlocks in the child.
MUTMUT_JOBS ?= 1
mutation: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,mutation]'
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
	    $(VENV)/bin/mutmut run --max-children $(MUTMUT_JOBS) || true
	$(PY) tools/mutation_score.py --survivors

# A reproducible 1-in-SAMPLE mutation sample of a named set of modules, with that set's tests
# only (pyproject.toml [tool.hpo-mutation.sets]; docs/testing.md), in build/mutation-SET.
SET ?= newer
SAMPLE ?= 25
mutation-sample: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,mutation]'
	$(PY) tools/mutation_set.py $(SET) --sample $(SAMPLE) --jobs $(MUTMUT_JOBS)

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

data: $(STAMP)
	$(PY) -m hpo.data download

figures-chapter2: $(STAMP)
	$(PY) -m experiments.figures_chapter2

# Your optimizer beside the thesis's baselines (README, "Benchmark an optimizer"):
# make reproduce-benchmark CANDIDATES=optuna_tpe,my_method PROFILE=smoke
# (SEARCH_PATH=pkg://their_package/conf for method files outside conf/; BENCHMARK=<name> for
# an own experiment file in that package's conf/experiment/)
BENCHMARK ?= benchmark
reproduce-benchmark: $(STAMP)
	$(PY) -m experiments.reproduce $(BENCHMARK) --profile $(PROFILE) --candidates "$(CANDIDATES)" --search-path "$(SEARCH_PATH)"

# Every study by its experiment file's name: make reproduce-chapter3 (chapter4, chapter5, esmbo,
# ensembles, surrogates, hierarchical, autoweka; a new conf/experiment/<name>.yaml too), the
# report in results/<name>/<profile>/report/report.md
reproduce-%: $(STAMP)
	$(PY) -m experiments.reproduce $* --profile $(PROFILE)

status: $(STAMP)
	$(PY) -m experiments.sweep status $(EXPERIMENT) --profile $(PROFILE)

# Quick versions of the benchmarks (full ones: see README). Peers need the baselines extra;
# throughput and the SVM problems need UCI-121 (HPO_UCI121_DIR or `make data`).
bench: $(STAMP)
	$(PY) benchmarks/bo_step.py
	$(PY) benchmarks/throughput.py --quick
	$(PY) benchmarks/bo_quality.py --quick

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
