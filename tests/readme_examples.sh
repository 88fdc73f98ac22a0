#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's example snippets are the examples' own code: each
# ```cpp examples/NAME.cc block of the README must equal the part of that
# file between "// [readme]" and "// [/readme]", and every example must have
# its block. Args: SOURCE_DIR
set -euo pipefail
src="$1"
count=0
for file in "$src"/examples/*.cc; do
  name="examples/$(basename "$file")"
  region=$(awk '/\/\/ \[\/readme\]/ { inside = 0 } inside { print } /\/\/ \[readme\]/ { inside = 1 }' "$file" |
    sed 's/^  //')
  block=$(awk -v tag="\`\`\`cpp $name" '$0 == tag { inside = 1; next } /^```$/ && inside { exit } inside { print }' \
    "$src/README.md")
  if [ -z "$region" ]; then echo "$name has no // [readme] part"; exit 1; fi
  if [ "$region" != "$block" ]; then
    echo "README's block for $name differs from the file's // [readme] part:"
    diff <(echo "$region") <(echo "$block") || true
    exit 1
  fi
  count=$((count + 1))
done
echo "readme examples: $count match"
