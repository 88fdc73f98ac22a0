#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Compiles every ```cpp block of the README, as a user would paste it: each
# block's #include lines at the top of a file, the rest as the body of a
# function returning int. Warnings are errors (an ignored [[nodiscard]]
# Status is one). Args: SOURCE_DIR CXX
set -euo pipefail
src="$1" cxx="${2:-c++}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
awk -v dir="$work" '
  /^```cpp$/ { n++; inside = 1; next }
  /^```$/ && inside { inside = 0; next }
  inside && /^#include/ { print > (dir "/" n ".inc"); next }
  inside { print > (dir "/" n ".body") }
' "$src/README.md"
count=0
for body in "$work"/*.body; do
  n=$(basename "$body" .body)
  {
    echo "#include <iostream>"
    [ -f "$work/$n.inc" ] && cat "$work/$n.inc"
    echo "int Example$n() {"
    cat "$body"
    echo "return 0;"
    echo "}"
  } > "$work/$n.cc"
  if ! "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -Wno-unused-variable \
       -Wno-unused-but-set-variable -I"$src/include" "$work/$n.cc"; then
    echo "README snippet $n does not compile:"; cat -n "$work/$n.cc"; exit 1
  fi
  count=$((count + 1))
done
[ "$count" -gt 0 ] || { echo "no cpp snippets found"; exit 1; }
echo "readme snippets: $count compile"
