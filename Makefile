# Two commands on a fresh machine:
#   make notebooks [PROFILE=default|smoke|paper]   execute the notebook series; default: in place, regenerating
#                                                  figures/ and results/ from the committed results, training nothing;
#                                                  any other profile: under build/<profile>/
#   make notebooks TRAIN=1  (= make retrain)       ... and train whatever results/ lacks (TRAIN_MISSING)
#   make runtimes                                  ... recording each notebook's wall time for the README
#   make test                                      unit tests, then every notebook in the smoke profile under build/smoke/, then nbval
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

# profiles other than default write notebooks, results, figures and checkpoints under build/<profile>/
# (tools/run_notebooks.py); nbval re-runs the smoke notebooks with the same folders
BUILD := build
SMOKE := $(abspath $(BUILD))/smoke
# matplotlib's font cache lives in the project, not in ~/.cache: a shared cache rewritten by another
# process (seen: one killed mid-run kept 31 of 71 fonts) changes figure bytes and adds findfont noise
export MPLCONFIGDIR ?= $(abspath $(BUILD))/mpl
SMOKE_ENV := BBB_QUIET=1 BBB_OUTPUT_DIR=$(SMOKE) BBB_FIGURES_DIR=$(SMOKE)/figures \
	BBB_RESULTS_DIR=$(SMOKE)/results BBB_CHECKPOINT_DIR=$(SMOKE)/checkpoints \
	PYTHONPATH=$(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))

.PHONY: venv notebooks runtimes retrain test test-gpu unit smoke nbval bench sweep table1 sync clean

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

# the README's table of long runs from this machine: every notebook's wall time into
# results/runtimes.json (`make notebooks` alone records them in build/runtimes.json), then the table
runtimes: $(STAMP)
	$(PY) tools/run_notebooks.py --profile default --kernel $(KERNEL) --record-runtimes
	$(PY) tools/runtimes_table.py

retrain: TRAIN := 1
retrain: notebooks

test: unit smoke nbval

unit: $(STAMP)
	$(PY) -m pytest tests -q

smoke: $(STAMP)
	rm -rf $(SMOKE)
	$(PY) tools/run_notebooks.py --profile smoke --kernel $(KERNEL)

nbval: $(STAMP)
	$(SMOKE_ENV) MPLBACKEND=module://matplotlib_inline.backend_inline \
		$(PY) -m pytest -q --nbval-lax --nbval-current-env $(SMOKE)/notebooks

# the checks that need a CUDA GPU (skipped by `make test` where there is none): the GPU path's
# gradients, training, bit-for-bit repeats and checkpoints across devices (tests/test_cuda.py)
test-gpu: $(STAMP)
	$(PY) -m pytest tests/test_cuda.py -q -rA

# notebooks/NN_name.py (percent scripts, where edits happen) <-> notebooks/NN_name.ipynb
sync: $(STAMP)
	$(PY) -m jupytext --sync notebooks/[0-9][0-9]_*.ipynb

# validation searches on Ray Tune (results/<notebook>/sweep/); RAY_ADDRESS=... runs them on a cluster
sweep: $(STAMP)
	$(PY) tools/run_sweeps.py --profile $(PROFILE) $(if $(ONLY),--only $(ONLY))

# Table 1: the chosen recipes on the reported seeds (all widths; hours on 2 cores, resumable)
# PROTOCOL=paper: the paper's own protocol (plain SGD, random start, 600 epochs; results/01_mnist_
# classification/paper_protocol/), resumable; WIDTH=1200 trains only that width's final runs;
# DEVICE=cuda trains on a GPU (each run's record names its machines);
# JOBS=2 runs two processes that share the campaign
# PROTOCOL=plan_v1: analysis_plan.json v1 (equal searches at every width, the chosen recipes on the
# reported seeds, the controls, the plan's tests; results/01_mnist_classification/plan_v1/),
# resumable; WIDTH=400 runs only that width; JOBS=2 as above (tools/table1_plan.py status: progress)
PROTOCOL ?= ours
JOBS ?= 1
table1: $(STAMP)
ifeq ($(PROTOCOL),paper)
	for i in $$(seq $(JOBS)); do $(PY) tools/paper_protocol.py run --profile $(PROFILE) \
		$(if $(WIDTH),--widths $(WIDTH)) $(if $(DEVICE),--device $(DEVICE)) & done; wait
else ifeq ($(PROTOCOL),plan_v1)
	pids=; for i in $$(seq $(JOBS)); do $(PY) tools/table1_plan.py run --profile $(PROFILE) \
		$(if $(WIDTH),--widths $(WIDTH)) & pids="$$pids $$!"; done; \
	for p in $$pids; do wait $$p; done
else
	$(PY) tools/table1.py --profile $(PROFILE)
endif

# speed benchmarks -> results/benchmarks/ (the peers come from the `bench` extra); QUICK=1: the
# seconds-long modes the tests run (tests/test_benchmarks.py), written under build/benchmarks/
bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) benchmarks/bench_step.py --threads 1 $(if $(QUICK),--quick)
	$(PY) benchmarks/bench_bandit.py --threads 1 $(if $(QUICK),--quick)
	$(PY) benchmarks/accuracy_fast_vs_reference.py $(if $(QUICK),--quick)
	$(PY) benchmarks/profile_step.py $(if $(QUICK),--quick)
	$(PY) benchmarks/bench_kernel_overhead.py $(if $(QUICK),--quick)
	$(PY) benchmarks/epoch_times.py $(if $(QUICK),--quick)
	$(if $(QUICK),,$(PY) tools/performance_table.py)

clean:
	rm -rf $(BUILD)
