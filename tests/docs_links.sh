#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The docs hold together: every relative link of README.md, CONTRIBUTING.md,
# SECURITY.md and docs/*.md reaches a file that exists and, with a #anchor,
# a heading of that file (GitHub's anchors: lowercase, punctuation dropped,
# spaces to '-', a repeated heading gets -1, -2...); every docs page links
# back to the README and the README links every docs page; and every
# docs/<file>.md#<anchor> (or CONTRIBUTING.md#, SECURITY.md#, README.md#)
# that a source file cites names a heading that exists. Args: SOURCE_DIR
set -euo pipefail
src="$(cd "$1" && pwd)"
cd "$src"
docs=(README.md)
for f in CONTRIBUTING.md SECURITY.md docs/*.md; do [ -f "$f" ] && docs+=("$f"); done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail=0
problem() { echo "docs links: $*"; fail=1; }

# The anchors of one Markdown file, one a line (headings in code blocks are
# not headings).
anchors() {
  LC_ALL=C awk '
    /^```/ { fence = !fence; next }
    fence || !/^#+ / { next }
    {
      h = $0; sub(/^#+ +/, "", h); sub(/ +#* *$/, "", h)
      h = tolower(h)
      gsub(/[^a-z0-9 _\200-\377-]/, "", h)
      gsub(/ /, "-", h)
      n = seen[h]++
      print (n ? h "-" n : h)
    }' "$1"
}
for doc in "${docs[@]}"; do
  mkdir -p "$work/$(dirname "$doc")"
  anchors "$doc" > "$work/$doc.anchors"
done
# Whether file $1 (relative to SOURCE_DIR) has anchor $2.
has_anchor() {
  local list="$work/$1.anchors"
  [ -f "$list" ] || { mkdir -p "$work/$(dirname "$1")"; anchors "$1" > "$list"; }
  grep -qxF -- "$2" "$list"
}

links=0
for doc in "${docs[@]}"; do
  dir="$(dirname "$doc")"
  # Each link target outside code blocks and code spans: LINE<TAB>TARGET.
  while IFS=$'\t' read -r line target; do
    links=$((links + 1))
    case "$target" in http://* | https://* | mailto:*) continue ;; esac
    path="${target%%#*}"
    anchor=""
    [[ "$target" == *"#"* ]] && anchor="${target#*#}"
    if [ -z "$path" ]; then
      file="$doc"
    else
      file="$(realpath -m --relative-to="$src" "$dir/$path")"
      if [ ! -e "$file" ]; then problem "$doc:$line: $target: no file $file"; continue; fi
    fi
    if [ -n "$anchor" ]; then
      if [[ "$file" != *.md ]]; then problem "$doc:$line: $target: an anchor in a file that is not Markdown"
      elif ! has_anchor "$file" "$anchor"; then problem "$doc:$line: $target: no heading #$anchor in $file"; fi
    fi
  done < <(awk '
    /^```/ { fence = !fence; next }
    fence { next }
    {
      s = $0; gsub(/`[^`]*`/, "", s)
      while (match(s, /\]\([^) ]+\)/)) {
        printf "%d\t%s\n", NR, substr(s, RSTART + 2, RLENGTH - 3)
        s = substr(s, RSTART + RLENGTH)
      }
    }' "$doc")
done

# Every docs page links back to the README; the README links every page.
for doc in docs/*.md; do
  grep -q '](\.\./README\.md' "$doc" || problem "$doc has no link back to ../README.md"
  grep -q "](${doc}[)#]" README.md || problem "README.md does not link $doc"
done
for doc in CONTRIBUTING.md SECURITY.md; do
  [ -f "$doc" ] || continue
  grep -q '](README\.md' "$doc" || problem "$doc has no link back to README.md"
  grep -q "](${doc}[)#]" README.md || problem "README.md does not link $doc"
done

# Citations in the source: docs/<file>.md#<anchor> and the top-level pages.
cites=0
while IFS=: read -r file line cite; do
  cites=$((cites + 1))
  path="${cite%%#*}"
  if [ ! -f "$path" ]; then problem "$file:$line: cites $cite: no file $path"; continue; fi
  if [[ "$cite" == *"#"* ]] && ! has_anchor "$path" "${cite#*#}"; then
    problem "$file:$line: cites $cite: no heading #${cite#*#} in $path"
  fi
done < <(grep -rIno -E '(docs/[A-Za-z0-9_-]+\.md|(README|CONTRIBUTING|SECURITY)\.md)(#[a-z0-9_-]+)?' \
  --exclude-dir=.git --exclude-dir=node_modules --exclude-dir='build*' --exclude-dir=Testing \
  --exclude='*.md' . | sed 's|^\./||')

[ "$fail" -eq 0 ] || exit 1
echo "docs links: ok (${#docs[@]} pages, $links links, $cites citations in the source)"
