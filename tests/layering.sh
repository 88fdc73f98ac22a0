#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails when an #include crosses a layer the wrong way (CONTRIBUTING.md#layout).
# Layers, bottom to top; each may include its own and lower ones, and the
# public headers (blobtable/...). Public headers include only public ones.
# Every file of a layer's directory is checked, its subdirectories' too
# (storage/local/, tools/cli/, devtools/stress/sim/, ...). The language
# bindings (bindings/) are built on the public API only: they include public
# headers and their own. testing/ holds the
# test seams (fake clock, sync points, counting store, hooks): of those, the
# library's layers include only testing/sync_point.h (BT_SYNC_POINT is a
# no-op outside the test library) and testing/hooks.h (what a test sets
# through StoreOptions::testing); devtools/ may include anything.
# Each public header belongs to a layer too (public_layer below): a public
# header includes only public headers of its layer or lower ones, and a
# layer's code only public headers of its layer or lower ones. The storage
# backends (storage/local/, storage/azure/) never include each other, and
# storage/'s own code includes them only where a location picks one
# (open_blob_store.cc).
# Args: SOURCE_DIR
set -euo pipefail
cd "$1"
layers=(util testing storage model cache txn kv coord bindings tools devtools)
declare -A public_layer=(
  [export.h]=util [status.h]=util [clock.h]=util [retry.h]=util [metrics.h]=util [trace.h]=util
  [storage_options.h]=storage [blob_store.h]=storage [fault_injection.h]=storage
  [entity.h]=model [index.h]=model [entity_view.h]=model [cache.h]=cache
  [options.h]=kv [table.h]=kv [txn.h]=kv [store.h]=kv
  [lock.h]=coord [leader.h]=coord [queue.h]=coord [counter.h]=coord [watch.h]=coord
  [c.h]=bindings
)
# The one arrow that still points up, and why: Transaction (blobtable/txn.h)
# is declared in terms of Table (kv) but implemented by the transaction
# layer, so txn/ includes txn.h (and through it table.h).
allowed_up=("txn:txn.h")
bad=0
rank() { local i; for i in "${!layers[@]}"; do [ "${layers[$i]}" = "$1" ] && echo "$i" && return; done; echo -1; }
public_rank() {
  local layer=${public_layer[$1]:-}
  if [ -z "$layer" ]; then echo -1; else rank "$layer"; fi
}
for i in "${!layers[@]}"; do
  dir=${layers[$i]}
  while IFS=: read -r file line include; do
    target=${include%%/*}
    if [ "$target" = blobtable ]; then
      header=${include#blobtable/}
      r=$(public_rank "$header")
      if [ "$r" -lt 0 ]; then
        echo "tests/layering.sh: public header $header has no layer (add it to public_layer)"; bad=1
      elif [ "$r" -gt "$i" ] && [ "$dir" != testing ] &&
           [[ ! " ${allowed_up[*]} " =~ " $dir:$header " ]]; then
        echo "$file:$line: $dir/ may not include \"$include\" (public header of layer ${public_layer[$header]})"; bad=1
      fi
      continue
    fi
    r=$(rank "$target")
    if [ "$r" -lt 0 ] || [ "$r" -gt "$i" ]; then
      echo "$file:$line: $dir/ may not include \"$include\" (layer $target)"; bad=1
    elif [ "$target" = testing ] && [ "$dir" != testing ] && [ "$dir" != devtools ] &&
         [ "$include" != testing/sync_point.h ] && [ "$include" != testing/hooks.h ]; then
      echo "$file:$line: $dir/ may not include \"$include\" (a test seam)"; bad=1
    fi
  done < <(grep -rHnoE --include='*.h' --include='*.cc' '^#include "[a-z_]+/[^"]+"' "$dir" |
           sed -E 's/#include "([^"]+)"/\1/' | sort -t: -k1,1 -k2,2n)
done
if grep -HnE '^#include "' include/blobtable/*.h | grep -v '#include "blobtable/'; then
  echo "public headers may include only public headers"; bad=1
fi
for h in include/blobtable/*.h; do
  name=$(basename "$h")
  own=$(public_rank "$name")
  [ "$own" -lt 0 ] && { echo "$h: no layer (add it to public_layer)"; bad=1; continue; }
  while IFS=: read -r line include; do
    other=${include#blobtable/}
    r=$(public_rank "$other")
    if [ "$r" -gt "$own" ]; then
      echo "$h:$line: a ${public_layer[$name]} header may not include \"$include\" (layer ${public_layer[$other]})"; bad=1
    fi
  done < <(grep -noE '^#include "blobtable/[^"]+"' "$h" | sed -E 's/#include "([^"]+)"/\1/')
done
while IFS=: read -r file line include; do
  case "$file" in
    storage/local/*) [[ "$include" == storage/azure/* ]] && { echo "$file:$line: the local backend may not include \"$include\""; bad=1; } ;;
    storage/azure/*) [[ "$include" == storage/local/* ]] && { echo "$file:$line: the Azure backend may not include \"$include\""; bad=1; } ;;
    storage/open_blob_store.cc) ;;
    storage/*) [[ "$include" == storage/local/* || "$include" == storage/azure/* ]] &&
                 { echo "$file:$line: storage/'s own code may not include a backend (\"$include\")"; bad=1; } ;;
  esac
done < <(grep -rHnoE --include='*.h' --include='*.cc' '^#include "storage/[^"]+"' storage |
         sed -E 's/#include "([^"]+)"/\1/')
while IFS=: read -r file line include; do
  echo "$file:$line: bindings/ may include only public headers and its own (\"$include\")"; bad=1
done < <(grep -rHnoE --include='*.h' --include='*.cc' '^#include "[a-z_]+/[^"]+"' bindings |
         sed -E 's/#include "([^"]+)"/\1/' | grep -vE ':(blobtable|bindings)/' || true)
[ "$bad" -eq 0 ] && echo "layering: ok (${layers[*]})"
exit "$bad"
