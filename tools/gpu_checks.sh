#!/usr/bin/env bash
# The checks that need a CUDA GPU, as one short script for a lent GPU machine (its python3 holds
# torch; nothing is installed): tests/test_cuda.py, then one row of the BBB step against the
# deterministic step on the GPU (benchmarks/bench_step.py --device cuda, no peers). Everything
# goes to $OUT (default build/gpu_checks): the test log and JUnit XML, the benchmark's JSON.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-build/gpu_checks}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD" PYTHONUNBUFFERED=1 BBB_QUIET=1 MPLBACKEND=Agg
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
python3 -c "import torch; print('torch', torch.__version__)" | tee -a "$OUT/gpu.txt"
python3 -m pytest tests/test_cuda.py -q -rA -p no:cacheprovider --junitxml="$OUT/test_cuda.xml" \
    2>&1 | tee "$OUT/test_cuda.log"
tests=${PIPESTATUS[0]}
python3 benchmarks/bench_step.py --device cuda --H 400 1200 --no-peers --no-memory \
    --impls det det_fused helpers_paper helpers_closed_form helpers_lrt \
    --out "$OUT/step_cuda.json" 2>&1 | tee "$OUT/bench.log"
bench=${PIPESTATUS[0]}
echo "tests rc=$tests bench rc=$bench"
exit $(( tests || bench ))
