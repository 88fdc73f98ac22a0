#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The shared library exports no symbol that names an internal type: its ABI
# is the public headers' (include/blobtable/export.h). Args: LIBRARY
set -euo pipefail
leaked=$(nm -DC --defined-only "$1" | grep "internal::" || true)
if [ -n "$leaked" ]; then
  echo "exported symbols naming internal types:"
  echo "$leaked"
  exit 1
fi
echo "abi: ok ($(nm -D --defined-only "$1" | wc -l) symbols exported)"
