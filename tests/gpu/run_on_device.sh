#!/usr/bin/env bash
# The GPU checks in one short run, for a machine with an NVIDIA GPU (the device tool's, or a course's):
#
#     tests/gpu/run_on_device.sh [OUT]
#
# builds the environment from requirements.lock (make venv) and, where its torch is the CPU build,
# replaces it by the CUDA build of the same version (from $TORCH_INDEX, default PyTorch's cu126 index;
# point it at a local folder of wheels with TORCH_INDEX=file:///path, or set TORCH_WHEEL to a wheel file,
# where the machine has no network). Then, each bounded in time, with its log under OUT (default
# /tmp/gpu-run):
#   1. the CUDA-marked tests (tests/test_gpu_sandbox.py, the reference's CUDA tests);
#   2. the corpus's `needs: cuda` variants (tests/test_grader_corpus.py -k cuda);
#   3. a correct, a buggy and a hostile submission graded with CUDA present and hidden
#      (CUDA_VISIBLE_DEVICES=""), their verdicts compared check by check;
#   4. the GPU T² study of a correct timer and of one without synchronise (timing part);
#   5. the part overhead with CUDA initialised (tests/benchmarks/part_overhead.py).
# Without a GPU it says so and exits 0: nothing to run.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-${OUT:-/tmp/gpu-run}}
PY=.venv/bin/python
mkdir -p "$OUT"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "no NVIDIA GPU here: nothing to run (skipped)"
    exit 0
fi
step() { echo "== $*" | tee -a "$OUT/summary.txt"; }
make venv >"$OUT/venv.log" 2>&1 || { echo "make venv failed: $OUT/venv.log"; exit 1; }
if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    version=$(sed -n 's/^torch==//p' requirements.lock)
    if [ -n "${TORCH_WHEEL:-}" ]; then
        "$PY" -m pip install --quiet --no-deps --force-reinstall "$TORCH_WHEEL" >"$OUT/torch.log" 2>&1
    else
        "$PY" -m pip install --quiet --no-deps --force-reinstall "torch==$version" \
            --index-url "${TORCH_INDEX:-https://download.pytorch.org/whl/cu126}" >"$OUT/torch.log" 2>&1
    fi || { echo "no CUDA build of torch $version could be installed: $OUT/torch.log"; exit 1; }
fi
nvidia-smi -L | tee "$OUT/summary.txt"
"$PY" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, torch.cuda.get_device_name(0))' \
    | tee -a "$OUT/summary.txt"
failed=0
run() {  # name, seconds, command...
    local name=$1 seconds=$2; shift 2
    step "$name"
    if timeout "$seconds" "$@" >"$OUT/$name.log" 2>&1; then echo "   ok" | tee -a "$OUT/summary.txt"
    else echo "   FAILED (exit $?): $OUT/$name.log" | tee -a "$OUT/summary.txt"; tail -20 "$OUT/$name.log"; failed=1; fi
}
export PYTHONDONTWRITEBYTECODE=1 AUTOGRADER_SECRET=gpu-run
run cuda-tests 240 "$PY" -m pytest -q -m cuda tests/test_gpu_sandbox.py tests/reference -p no:cacheprovider
run corpus-cuda 240 "$PY" -m pytest -q tests/test_grader_corpus.py -k cuda -p no:cacheprovider
run verdicts 300 "$PY" tests/gpu/verdicts.py "$OUT/verdicts"
run overhead 120 "$PY" tests/benchmarks/part_overhead.py --cuda
exit $failed
