#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails when an #include crosses a layer the wrong way (CONTRIBUTING.md#layout).
# Layers, bottom to top; each may include its own and lower ones, and the
# public headers (blobtable/...). Public headers include only public ones.
# Every file of a layer's directory is checked, its subdirectories' too
# (storage/local/, tools/cli/, devtools/stress/sim/, ...). testing/ holds the
# test seams (fake clock, sync points, counting store): of those, the
# library's layers include only testing/sync_point.h (BT_SYNC_POINT is a
# no-op outside the test library); devtools/ may include anything.
# Args: SOURCE_DIR
set -euo pipefail
cd "$1"
layers=(util testing storage model cache txn kv coord tools devtools)
bad=0
rank() { local i; for i in "${!layers[@]}"; do [ "${layers[$i]}" = "$1" ] && echo "$i" && return; done; echo -1; }
for i in "${!layers[@]}"; do
  dir=${layers[$i]}
  while IFS=: read -r file line include; do
    target=${include%%/*}
    [ "$target" = blobtable ] && continue
    r=$(rank "$target")
    if [ "$r" -lt 0 ] || [ "$r" -gt "$i" ]; then
      echo "$file:$line: $dir/ may not include \"$include\" (layer $target)"; bad=1
    elif [ "$target" = testing ] && [ "$dir" != testing ] && [ "$dir" != devtools ] &&
         [ "$include" != testing/sync_point.h ]; then
      echo "$file:$line: $dir/ may not include \"$include\" (a test seam)"; bad=1
    fi
  done < <(grep -rHnoE --include='*.h' --include='*.cc' '^#include "[a-z_]+/[^"]+"' "$dir" |
           sed -E 's/#include "([^"]+)"/\1/' | sort -t: -k1,1 -k2,2n)
done
if grep -HnE '^#include "' include/blobtable/*.h | grep -v '#include "blobtable/'; then
  echo "public headers may include only public headers"; bad=1
fi
[ "$bad" -eq 0 ] && echo "layering: ok (${layers[*]})"
exit "$bad"
