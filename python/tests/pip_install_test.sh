#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/python.md#installing, as written: a fresh virtual environment of the
# machine's python3, `pip install ./python` with no package index
# (PIP_NO_INDEX: nothing may come from PyPI), then the complete program of
# docs/python.md run by that environment's python, checked by what it prints.
# Args: SOURCE_DIR [BUILD_DIR [CMAKE_ARGS]]: with BUILD_DIR, the backend
# builds there (BLOBTABLE_PIP_BUILD_DIR; CI gives it its static build, so that
# only the extension compiles) with CMAKE_ARGS (BLOBTABLE_PIP_CMAKE_ARGS).
set -euo pipefail
src="$(cd "$1" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python="${BLOBTABLE_PIP_PYTHON:-python3}"
if [ -n "${2:-}" ]; then
  export BLOBTABLE_PIP_BUILD_DIR="$(cd "$2" && pwd)"
  export BLOBTABLE_PIP_CMAKE_ARGS="${3:-}"
fi
# The documented command (docs/python.md#installing), with the environment
# made outside the checkout.
PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 bash -c \
  "cd '$src' && $python -m venv '$work/venv' && '$work/venv/bin/pip' install ./python" \
  > "$work/pip.log" 2>&1 ||
  { tail -40 "$work/pip.log"; echo "pip install test: pip failed"; exit 1; }
awk '/^```python docs\/python.md#a-complete-program$/ { inside = 1; next }
     /^```$/ && inside { exit } inside { print }' "$src/docs/python.md" > "$work/program.py"
out=$(cd "$work" && env -u PYTHONPATH "$work/venv/bin/python" "$work/program.py" "$work/store")
expected="99.5 3 2026-11-30T09:30:00+00:00
already there: Conflict
big order: order-0001
north left: 7"
if [ "$(echo "$out" | head -4)" != "$expected" ] ||
   ! echo "$out" | tail -1 | grep -qE '^lock held, token [1-9][0-9]*$'; then
  echo "the installed package's program printed:"; echo "$out"; exit 1
fi
version=$("$work/venv/bin/python" -c 'import blobtable; print(blobtable.__version__)')
echo "pip install test: ok ($("$work/venv/bin/python" --version), blobtable $version)"
