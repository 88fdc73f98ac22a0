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
# Every block but the programs is a function of one file, compiled once
# (each its own file took a compiler run of the headers each: 13 blocks,
# 20 s of CPU); a failure there is then found block by block.
combined="$work/combined.cc"
compile() { "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -Wno-unused-variable \
  -Wno-unused-but-set-variable -I"$src/include" "$1"; }
bodies=()
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
    count=$((count + 1))
    if [ -f "$dir/$n.main" ]; then
      cp "$all" "$dir/$n.cc"
      if ! compile "$dir/$n.cc"; then
        echo "$rel: C++ block $n does not compile:"; cat -n "$dir/$n.cc"; exit 1
      fi
      continue
    fi
    {
      echo "#include <iostream>"
      [ -f "$dir/$n.inc" ] && cat "$dir/$n.inc"
      echo "int Example$n() {"
      [ -f "$dir/$n.body" ] && cat "$dir/$n.body"
      echo "return 0;"
      echo "}"
    } > "$dir/$n.cc"
    bodies+=("$rel|$n|$dir")
  done
done
{
  for b in "${bodies[@]}"; do IFS='|' read -r rel n dir <<<"$b"; grep -h '^#include' "$dir/$n.cc"; done |
    sort -u
  i=0
  for b in "${bodies[@]}"; do
    IFS='|' read -r rel n dir <<<"$b"
    i=$((i + 1))
    grep -v '^#include' "$dir/$n.cc" | sed "s/^int Example$n() {/int Block$i() {/"
  done
} > "$combined"
if [ "${#bodies[@]}" -gt 0 ] && ! compile "$combined" 2>/dev/null; then
  for b in "${bodies[@]}"; do
    IFS='|' read -r rel n dir <<<"$b"
    if ! compile "$dir/$n.cc"; then
      echo "$rel: C++ block $n does not compile:"; cat -n "$dir/$n.cc"; exit 1
    fi
  done
  compile "$combined" || { echo "the blocks compile alone but not together:"; exit 1; }
fi
[ "$count" -gt 0 ] || { echo "no cpp snippets found"; exit 1; }
echo "readme snippets: $count compile"
