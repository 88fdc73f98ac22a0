#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails when a header declares names in a namespace other than its own, or
# at global scope (CONTRIBUTING.md#layout). A library header (any directory but include/,
# tools/, devtools/, python/, tests/, bench/ and examples/) declares in
# blobtable::internal or in one module namespace below it
# (blobtable::internal::<module>); the one exception is a public function
# declared again where its public header cannot be included (a
# BLOBTABLE_EXPORT declaration, left in blobtable). A program's header
# declares in blobtable::<program> (programs below). Anywhere: anonymous
# namespaces, aliases (namespace fs = ...) and the namespaces of std and of
# the libraries whose names are specialized or declared ahead (msgpack, CLI).
# Nesting counts: `namespace blobtable { namespace internal {` is
# blobtable::internal, and a namespace is checked only where it holds a
# declaration of its own.
# Args: SOURCE_DIR
set -euo pipefail
cd "$1"
# Each program directory and its namespace (the most specific directory wins).
declare -A programs=(
  [tools]=cli [devtools/stress]=stress [devtools/stress/sim]=sim [devtools/proxy]=proxy
  [python/src]=python
)
foreign='std|msgpack|CLI'
bad=0
program_of() {
  local dir=$1
  while [ "$dir" != . ]; do
    [ -n "${programs[$dir]:-}" ] && { echo "${programs[$dir]}"; return; }
    dir=$(dirname "$dir")
  done
}
check() {  # FILE ALLOWED_REGEX WHAT PUBLIC_REDECLARATIONS(0/1) [C_HANDLES(0/1)]
  awk -v allowed="$2" -v what="$3" -v redecl="$4" -v c_handles="${5:-0}" \
    -v foreign="^($foreign)(::|$)" '
    function top() { return n > 0 ? path[n] : "" }
    function open_brace(ns, full) {
      n++; path[n] = full; isns[n] = ns; opened[n] = FNR; reported[n] = 0; export_decl[n] = 0
    }
    function content(text) {  # text declared directly in the innermost scope
      if (n == 0 && c_handles && text ~ /^[ \t]*struct[ \t]+blobtable_[a-z_]+[ \t]*$/) {
        handle_next = 1; return  # a C handle: its body follows
      }
      if (n == 0 && handle_next && text == "{") { handle_next = 0; return }
      if (n == 0) {
        if (!global_reported) printf "%s:%d: declares at global scope; %s\n", FILENAME, FNR, what
        global_reported = 1; bad = 1; return
      }
      if (!isns[n] || path[n] ~ foreign || path[n] ~ allowed) return
      if (path[n] ~ /\{anonymous\}/) return
      if (redecl && path[n] == "blobtable") {  # only BLOBTABLE_EXPORT declarations
        ok = 1; rest = text
        while (ok && rest !~ /^[ \t]*$/) {
          i = index(rest, ";"); stmt = i ? substr(rest, 1, i) : rest; rest = i ? substr(rest, i + 1) : ""
          if (export_decl[n] || stmt ~ /^[ \t]*BLOBTABLE_EXPORT[ \t]/) export_decl[n] = (i == 0)
          else if (stmt !~ /^[ \t;]*$/) ok = 0
        }
        if (ok) return
      }
      if (!reported[n]) {
        printf "%s:%d: declares in namespace %s; %s\n", FILENAME, opened[n], path[n], what
        reported[n] = 1; bad = 1
      }
    }
    {
      line = $0
      if (in_comment) {
        if (index(line, "*/") == 0) next
        line = substr(line, index(line, "*/") + 2); in_comment = 0
      }
      if (in_macro || line ~ /^[ \t]*#/) { in_macro = (line ~ /\\$/); next }
      gsub(/"([^"\\]|\\.)*"/, "\"\"", line)
      gsub(/'"'"'([^'"'"'\\]|\\.)+'"'"'/, "0", line)
      gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, " ", line)
      sub(/\/\/.*/, "", line)
      if (index(line, "/*") > 0) { line = substr(line, 1, index(line, "/*") - 1); in_comment = 1 }
      while (line !~ /^[ \t]*$/) {
        if (match(line, /^[ \t]*(inline[ \t]+)?namespace[ \t]+[A-Za-z_][A-Za-z0-9_:]*[ \t]*=[^;]*;/)) {
          line = substr(line, RLENGTH + 1)  # an alias
        } else if (match(line, /^[ \t]*(inline[ \t]+)?namespace[ \t]*\{/)) {
          line = substr(line, RLENGTH + 1)
          open_brace(1, top() == "" ? "{anonymous}" : top() "::{anonymous}")
        } else if (match(line, /^[ \t]*(inline[ \t]+)?namespace[ \t]+[A-Za-z_][A-Za-z0-9_:]*[ \t]*\{/)) {
          name = substr(line, 1, RLENGTH - 1)
          sub(/^[ \t]*(inline[ \t]+)?namespace[ \t]+/, "", name); sub(/[ \t]+$/, "", name)
          line = substr(line, RLENGTH + 1)
          open_brace(1, top() == "" ? name : top() "::" name)
        } else if (match(line, /^[ \t]*\}/)) {
          line = substr(line, RLENGTH + 1)
          if (n > 0) n--
        } else if (match(line, /^[^{}]+/)) {
          if (substr(line, 1, RLENGTH) ~ /^[ \t;]*$/) { line = substr(line, RLENGTH + 1); continue }
          content(substr(line, 1, RLENGTH)); line = substr(line, RLENGTH + 1)
        } else {  # "{" of anything but a namespace: what follows is not directly in one
          content("{"); line = substr(line, 2)
          open_brace(0, top())
        }
      }
    }
    END { exit bad }' "$1" || bad=1
}
library='a library header declares in blobtable::internal or blobtable::internal::<module>'
while IFS= read -r file; do
  file=${file#./}
  case "$file" in
    include/* | tests/* | bench/* | examples/*) continue ;;
    tools/* | devtools/* | python/*)
      program=$(program_of "$(dirname "$file")")
      if [ -z "$program" ]; then
        echo "$file: no program namespace for $(dirname "$file") (add it to programs)"; bad=1
        continue
      fi
      check "$file" "^blobtable::$program\$" "a header of this program declares in blobtable::$program" 0 ;;
    bindings/c/*) check "$file" '^blobtable::internal(::[a-z_][a-z0-9_]*)?$' "$library" 1 1 ;;
    *) check "$file" '^blobtable::internal(::[a-z_][a-z0-9_]*)?$' "$library" 1 ;;
  esac
done < <(find . \( -path './.*' -o -path './build*' -o -name node_modules \) -prune -o \
           -name '*.h' -type f -print | sort)
[ "$bad" -eq 0 ] && echo "namespaces: ok"
exit "$bad"
