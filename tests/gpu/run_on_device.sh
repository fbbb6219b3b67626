#!/usr/bin/env bash
# The GPU checks in one short run, for a machine with an NVIDIA GPU (the device tool's, or a course's):
#
#     tests/gpu/run_on_device.sh [OUT]
#
# Sets up the environment, one of two ways:
#   * with a network: builds it from requirements.lock (make venv) and, where its torch is the CPU build,
#     replaces it by the CUDA build of the same version (from $TORCH_INDEX, default PyTorch's cu126 index;
#     or set TORCH_WHEEL to a wheel file);
#   * without one (the device tool's machines): set BASE_PYTHON to a Python whose torch sees the GPU and
#     WHEELS to the folder tests/gpu/wheels.sh filled. The venv then reads that Python's packages (a .pth
#     file) and installs from WHEELS the lock's packages it lacks, each at the lock's version.
# Then, each bounded in time, with its log under OUT (default /tmp/gpu-run):
#   1. the CUDA-marked tests (tests/test_gpu_sandbox.py, the reference's CUDA tests);
#   2. tests/gpu/verdicts.py: the answer key, the corpus's `needs: cuda` mistakes (a timer without
#      synchronise, masks built on the CPU), a fabricated study and a GPU hog, graded with CUDA present and
#      hidden (CUDA_VISIBLE_DEVICES=""), scores, timings and verdicts compared check by check;
#   3. the part overhead with CUDA initialised (tests/benchmarks/part_overhead.py).
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
if [ -n "${BASE_PYTHON:-}" ]; then
    base_site=$("$BASE_PYTHON" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
    "$BASE_PYTHON" tests/gpu/offline_venv.py .venv "$base_site" "${WHEELS:?WHEELS: the folder tests/gpu/wheels.sh filled}" \
        >"$OUT/venv.log" 2>&1 || { echo "the offline venv failed: $OUT/venv.log"; tail -20 "$OUT/venv.log"; exit 1; }
else
    make venv >"$OUT/venv.log" 2>&1 || { echo "make venv failed: $OUT/venv.log"; exit 1; }
fi
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
run cuda-tests 200 "$PY" -m pytest -q -n 4 -m cuda tests/test_gpu_sandbox.py tests/reference -p no:cacheprovider
run verdicts 270 "$PY" tests/gpu/verdicts.py "$OUT/verdicts" "${PARTS:-masks,scaling,heads,positions,timing,tiles}"
cat "$OUT/verdicts.log"
run overhead 60 "$PY" tests/benchmarks/part_overhead.py --cuda --repeats 10
tail -5 "$OUT/overhead.log"
exit $failed
