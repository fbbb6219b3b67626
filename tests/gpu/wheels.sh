#!/usr/bin/env bash
# Download, here, the wheels that run_on_device.sh installs on a GPU machine with no network:
#
#     tests/gpu/wheels.sh [DIR] [PYTHON_VERSION]      (defaults: .whl and 3.12)
#
# every package of requirements.lock but torch (the machine's own CUDA build serves), and but the
# Jupyter front ends (JupyterLab, Notebook and their widgets) and their translations (babel), which
# no GPU check starts: for CPython PYTHON_VERSION on x86-64 Linux. run_on_device.sh installs only
# those the machine's Python lacks. Set SKIP to more names (space-separated) to leave out.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-.whl} version=${2:-3.12}
skip="torch jupyterlab jupyterlab_server jupyterlab_widgets jupyter-lsp jupyter_builder notebook notebook_shim
ipywidgets widgetsnbextension babel debugpy ${SKIP:-}"
wanted=$(mktemp)
trap 'rm -f "$wanted"' EXIT
pattern=$(printf '%s\n' $skip | sed 's/[-_.]/[-_.]/g; s/.*/^&==/' | paste -sd'|')
grep -viE "$pattern" requirements.lock >"$wanted"
platforms=()
for tag in manylinux1 manylinux2014 manylinux_2_17 manylinux_2_24 manylinux_2_27 manylinux_2_28 manylinux_2_31 \
           manylinux_2_34; do platforms+=(--platform "${tag}_x86_64"); done
python3 -m pip download --quiet --no-deps --only-binary=:all: --implementation cp --python-version "$version" \
    "${platforms[@]}" -d "$dir" -r "$wanted"
echo "$(ls "$dir" | wc -l) wheels in $dir ($(du -sh "$dir" | cut -f1))"
