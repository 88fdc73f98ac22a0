#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Compiles every ```cpp block of README.md, CONTRIBUTING.md, SECURITY.md and
# docs/*.md, as a user would paste it: a block that defines main() is a
# whole program, compiled as it is; any other block's #include lines go at
# the top of a file and the rest becomes the body of a function returning
# int. Warnings are errors (an ignored [[nodiscard]] Status is one).
# (```cpp examples/NAME.cc blocks are the examples' code: readme_examples.sh.)
# Args: SOURCE_DIR CXX
set -euo pipefail
src="$1" cxx="${2:-c++}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
docs=("$src/README.md")
for f in "$src/CONTRIBUTING.md" "$src/SECURITY.md" "$src"/docs/*.md; do
  [ -f "$f" ] && docs+=("$f")
done
count=0
for doc in "${docs[@]}"; do
  rel="${doc#"$src"/}"
  dir="$work/$(echo "$rel" | tr '/.' '__')"
  mkdir -p "$dir"
  awk -v dir="$dir" '
    /^```cpp$/ { n++; inside = 1; next }
    /^```$/ && inside { inside = 0; next }
    inside && /^int main\(/ { print "" > (dir "/" n ".main") }
    inside { print > (dir "/" n ".all") }
    inside && /^#include/ { print > (dir "/" n ".inc"); next }
    inside { print > (dir "/" n ".body") }
  ' "$doc"
  for all in "$dir"/*.all; do
    [ -e "$all" ] || continue
    n=$(basename "$all" .all)
    if [ -f "$dir/$n.main" ]; then
      cp "$all" "$dir/$n.cc"
    else
      {
        echo "#include <iostream>"
        [ -f "$dir/$n.inc" ] && cat "$dir/$n.inc"
        echo "int Example$n() {"
        [ -f "$dir/$n.body" ] && cat "$dir/$n.body"
        echo "return 0;"
        echo "}"
      } > "$dir/$n.cc"
    fi
    if ! "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -Wno-unused-variable \
         -Wno-unused-but-set-variable -I"$src/include" "$dir/$n.cc"; then
      echo "$rel: C++ block $n does not compile:"; cat -n "$dir/$n.cc"; exit 1
    fi
    count=$((count + 1))
  done
done
[ "$count" -gt 0 ] || { echo "no cpp snippets found"; exit 1; }
echo "readme snippets: $count compile"
