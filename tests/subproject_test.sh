#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# blobtable inside another project (tests/subproject), by add_subdirectory and
# by FetchContent: configured, it brings the library, its CLI and nothing of
# its tests, benchmarks, examples or install rules (BUILD: build it too).
# Args: SOURCE_DIR [BUILD]
set -euo pipefail
src="$1" build_too="${2:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for way in add_subdirectory FetchContent; do
  fetch=OFF
  [ "$way" = FetchContent ] && fetch=ON
  cmake -S "$src/tests/subproject" -B "$work/$way" -G Ninja -DBLOBTABLE_SOURCE="$src" \
    -DBLOBTABLE_BY_FETCHCONTENT=$fetch > "$work/$way.log" 2>&1 ||
    { cat "$work/$way.log"; exit 1; }
  targets=$(ninja -C "$work/$way" -t targets all | sed "s/:.*//" | sed "s|.*/||" | sort -u)
  for wanted in consumer libblobtable.a blobtable; do
    grep -qx "$wanted" <<< "$targets" || { echo "$way: no target $wanted"; exit 1; }
  done
  for unwanted in cli_test blobtable-bench read_modify_write install; do
    if grep -qx "$unwanted" <<< "$targets"; then echo "$way: target $unwanted is there"; exit 1; fi
  done
  if [ -n "$build_too" ]; then
    cmake --build "$work/$way" --target consumer > /dev/null
    "$work/$way/consumer" "$work/store-$way"
  fi
  echo "$way: ok"
done
