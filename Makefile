# Two commands on a fresh machine:
#   make notebooks [PROFILE=default|smoke|paper]   execute the notebook series in place, regenerate figures/ and results/
#                                                  (default: from the committed results, training nothing)
#   make notebooks TRAIN=1  (= make retrain)       ... and train whatever results/ lacks (TRAIN_MISSING)
#   make test                                      unit tests, then every notebook in the smoke profile under build/, then nbval
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PROFILE ?= default
KERNEL ?= python3
STAMP := $(VENV)/.installed

# Use the shared data sets when they sit beside the project (CI, development): nothing is downloaded.
SHARED_DATA := $(abspath ../shared/data)
ifeq ($(BBB_DATA_DIR),)
ifneq ($(wildcard $(SHARED_DATA)/MNIST/raw),)
export BBB_DATA_DIR := $(SHARED_DATA)
endif
endif
export MPLBACKEND := Agg
export PYTHONHASHSEED := 0
# the project's own kernel spec (registered below) comes first for papermill and nbval
export JUPYTER_PATH := $(abspath $(VENV))/share/jupyter
export JUPYTER_PLATFORM_DIRS := 1

BUILD := build
SMOKE_ENV := BBB_QUIET=1 BBB_FIGURES_DIR=$(abspath $(BUILD))/figures \
	BBB_RESULTS_DIR=$(abspath $(BUILD))/results BBB_CHECKPOINT_DIR=$(abspath $(BUILD))/checkpoints

.PHONY: venv notebooks retrain test unit smoke nbval bench sweep table1 sync clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e '.[dev,sweep]'
	$(PY) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python 3 (bbb)" >/dev/null
	touch $@

venv: $(STAMP)

# TRAIN=1: the notebooks train what results/ lacks; TRAIN=0 (profile default's default): they read
# results/ only and name the command for anything missing; other profiles train unless TRAIN=0
notebooks: $(STAMP)
	$(PY) tools/run_notebooks.py --profile $(PROFILE) --kernel $(KERNEL) $(if $(ONLY),--only $(ONLY)) \
		$(if $(TRAIN),--train $(TRAIN))

retrain: TRAIN := 1
retrain: notebooks

test: unit smoke nbval

unit: $(STAMP)
	$(PY) -m pytest tests -q

smoke: $(STAMP)
	rm -rf $(BUILD)/notebooks $(BUILD)/figures $(BUILD)/results $(BUILD)/checkpoints
	$(SMOKE_ENV) $(PY) tools/run_notebooks.py --profile smoke --kernel $(KERNEL) --out $(BUILD)/notebooks

nbval: $(STAMP)
	$(SMOKE_ENV) MPLBACKEND=module://matplotlib_inline.backend_inline \
		$(PY) -m pytest -q --nbval-lax --nbval-current-env $(BUILD)/notebooks

# notebooks/NN_name.py (percent scripts, where edits happen) <-> notebooks/NN_name.ipynb
sync: $(STAMP)
	$(PY) -m jupytext --sync notebooks/[0-9][0-9]_*.ipynb

# validation searches on Ray Tune (results/<notebook>/sweep/); RAY_ADDRESS=... runs them on a cluster
sweep: $(STAMP)
	$(PY) tools/run_sweeps.py --profile $(PROFILE) $(if $(ONLY),--only $(ONLY))

# Table 1: the chosen recipes on the reported seeds (all widths; hours on 2 cores, resumable)
# PROTOCOL=paper: the paper's own protocol (plain SGD, random start, 600 epochs; results/01_mnist_
# classification/paper_protocol/), resumable; WIDTH=1200 trains only that width's final runs;
# JOBS=2 runs two processes that share the campaign
PROTOCOL ?= ours
JOBS ?= 1
table1: $(STAMP)
ifeq ($(PROTOCOL),paper)
	for i in $$(seq $(JOBS)); do $(PY) tools/paper_protocol.py run --profile $(PROFILE) \
		$(if $(WIDTH),--widths $(WIDTH)) & done; wait
else
	$(PY) tools/table1.py --profile $(PROFILE)
endif

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) benchmarks/bench_step.py

clean:
	rm -rf $(BUILD)
