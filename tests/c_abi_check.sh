#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The C API's ABI (docs/api.md#c-abi-rules): the functions c.h declares, the
# symbols bindings/c/blobtable_c.map lists, and the symbols the shared
# library exports are the same set, each exported at a version node of the
# map (BLOBTABLE_C_1). Args: SOURCE_DIR LIBRARY
set -euo pipefail
src="$1" lib="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Declared: every "BLOBTABLE_C_API <type> <name>(" of the header.
grep -v '^#define' "$src/include/blobtable/c.h" | grep -o 'BLOBTABLE_C_API [^(]*(' |
  sed 's/.*[ *]\([a-z_0-9]*\)($/\1/' | sort -u > "$work/declared"
# Listed: the names of the map's global parts.
sed 's|/\*.*\*/||' "$src/bindings/c/blobtable_c.map" |
  grep -oE '^\s+blobtable_[a-z0-9_]+;' | tr -d ' ;' | sort -u > "$work/listed"
# Exported: defined dynamic symbols with their version.
nm -D --defined-only --with-symbol-versions "$lib" | awk '$2 ~ /^[TDRBW]$/ { print $3 }' |
  sort -u > "$work/exported_versioned"
sed 's/@.*//' "$work/exported_versioned" | sort -u > "$work/exported"
bad=0
if ! diff -u "$work/declared" "$work/listed" > "$work/d1"; then
  echo "c.h and blobtable_c.map differ (- declared, + listed):"; cat "$work/d1"; bad=1
fi
if ! diff -u "$work/listed" "$work/exported" > "$work/d2"; then
  echo "blobtable_c.map and the library's exports differ (- listed, + exported):"; cat "$work/d2"; bad=1
fi
unversioned=$(grep -v '@@*BLOBTABLE_C_' "$work/exported_versioned" || true)
if [ -n "$unversioned" ]; then
  echo "exported without a BLOBTABLE_C_ version:"; echo "$unversioned"; bad=1
fi
[ "$bad" -eq 0 ] || exit 1
echo "c abi: ok ($(wc -l < "$work/listed") functions at $(sed 's/.*@@*//' "$work/exported_versioned" | sort -u | tr '\n' ' '))"
