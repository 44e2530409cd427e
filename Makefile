# Every target creates or updates .venv first, so a fresh clone needs only Python 3.11 and make.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PROFILE ?= smoke
EXPERIMENT ?= chapter3

.PHONY: install demo test test-slow mutation lint data figures-chapter2 reproduce-chapter3 reproduce-chapter4 reproduce-chapter5 reproduce-esmbo reproduce-ensembles reproduce-autoweka status bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,chapter5,cluster,autoweka]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m experiments.demo

test: $(STAMP)
	$(PY) -m pytest

test-slow: $(STAMP)  # pytest exits 5 when no test is marked slow: that is not a failure
	$(PY) -m pytest -m slow || test $$? -eq 5

# Mutation testing (docs/testing.md): hours on one core, not part of CI. MUTMUT_JOBS workers;
# mutants of the modules in pyproject.toml's [tool.mutmut] only_mutate; prints a score per module.
MUTMUT_JOBS ?= 1
mutation: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,mutation]'
	$(VENV)/bin/mutmut run --max-children $(MUTMUT_JOBS) || true
	$(PY) tools/mutation_score.py --survivors

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

data: $(STAMP)
	$(PY) -m hpo.datasets download

figures-chapter2: $(STAMP)
	$(PY) -m experiments.figures_chapter2

reproduce-chapter3: $(STAMP)
	$(PY) -m experiments.reproduce chapter3 --profile $(PROFILE)

reproduce-chapter4: $(STAMP)
	$(PY) -m experiments.reproduce chapter4 --profile $(PROFILE)

reproduce-chapter5: $(STAMP)
	$(PY) -m experiments.reproduce chapter5 --profile $(PROFILE)

reproduce-esmbo: $(STAMP)
	$(PY) -m experiments.reproduce esmbo --profile $(PROFILE)

# seed 004 (Thornton 2014, Auto-WEKA; docs/seed004.md): results/autoweka/<profile>/report/report.md
reproduce-autoweka: $(STAMP)
	$(PY) -m experiments.autoweka reproduce --profile $(PROFILE)

reproduce-ensembles: $(STAMP)
	$(PY) -m experiments.reproduce ensembles --profile $(PROFILE)

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
