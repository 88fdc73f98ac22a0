#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The docs' example snippets are the examples' own code: each
# ```cpp examples/NAME.cc block of README.md, CONTRIBUTING.md, SECURITY.md
# or docs/*.md must equal the part of that file between "// [readme]" and
# "// [/readme]", every example must have its block (docs/api.md#examples
# shows them), and no block may name an example that does not exist.
# Args: SOURCE_DIR
set -euo pipefail
src="$1"
docs=("$src/README.md")
for f in "$src/CONTRIBUTING.md" "$src/SECURITY.md" "$src"/docs/*.md; do
  [ -f "$f" ] && docs+=("$f")
done
count=0
for file in "$src"/examples/*.cc "$src"/examples/*.c; do
  name="examples/$(basename "$file")"
  lang=cpp
  case "$file" in *.c) lang=c ;; esac
  # The part between the markers: "// [readme]" in C++, "/* [readme] */" in C.
  region=$(awk '/^ *(\/\/|\/\*) \[\/readme\]/ { inside = 0 } inside { print } /^ *(\/\/|\/\*) \[readme\]/ { inside = 1 }' "$file" |
    sed 's/^  //')
  if [ -z "$region" ]; then echo "$name has no // [readme] part"; exit 1; fi
  blocks=0
  for doc in "${docs[@]}"; do
    # Every block for this example in this file, each ended by a NUL.
    while IFS= read -r -d '' block; do
      blocks=$((blocks + 1))
      if [ "$region" != "$block" ]; then
        echo "${doc#"$src"/}'s block for $name differs from the file's // [readme] part:"
        diff <(echo "$region") <(echo "$block") || true
        exit 1
      fi
    done < <(awk -v tag="\`\`\`$lang $name" '
      $0 == tag { inside = 1; text = ""; next }
      /^```$/ && inside { inside = 0; printf "%s%c", text, 0; next }
      inside { text = text (text == "" ? "" : "\n") $0 }' "$doc")
  done
  if [ "$blocks" -eq 0 ]; then echo "no doc shows $name (a \`\`\`$lang $name block)"; exit 1; fi
  count=$((count + 1))
done
# A block that names an example that is not there (renamed, removed).
for doc in "${docs[@]}"; do
  while IFS= read -r name; do
    [ -f "$src/$name" ] || { echo "${doc#"$src"/} shows $name, which does not exist"; exit 1; }
  done < <(sed -n 's/^```c\(pp\)\{0,1\} \(examples\/.*\)$/\2/p' "$doc")
done
echo "readme examples: $count match"
