#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Draws bench/results/latest.png from the suite's CSV: one panel per kind of
# workload present (W1 embedded, W2 remote, W3 cached reads, W4 queries, W5 transactions, W6
# transactions), each cell (operation, threads or concurrency, added
# latency) with every system's operations per second, log scale.
# Args: CSV PNG
set -euo pipefail
csv="$1" png="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Pivot the rows of workload kind $1 (W1 ... W5): one line per cell, one
# column per system (in the CSV's order).
pivot() {
  awk -F, -v kind="$1" 'NR > 1 && ($1 == kind || index($1, kind "-") == 1) {
    cell = $2 "/" $3 "t"
    if ($1 != kind) { at = substr($1, length(kind) + 2); cell = $2 "/c" $3 "@" at }
    if (!(cell in seen)) { seen[cell] = 1; cells[++nc] = cell }
    if (!($4 in sys)) { sys[$4] = ++ns; names[ns] = $4 }
    v[cell, $4] = $5
  }
  END {
    printf "cell"; for (s = 1; s <= ns; s++) printf " %s", names[s]; printf "\n"
    for (c = 1; c <= nc; c++) {
      printf "%s", cells[c]
      for (s = 1; s <= ns; s++) printf " %s", ((cells[c], names[s]) in v ? v[cells[c], names[s]] : "NaN")
      printf "\n"
    }
  }' "$csv"
}
declare -A title=(
  [W1]="W1 embedded: operations per second (range100: queries of 100 rows)"
  [W2]="W2 remote (Azurite through the latency proxy): operations per second (cN@M: N at once, M ms added)"
  [W3]="W3 reads of an Azure store by read policy, and the embedded get: reads per second"
  [W4]="W4 partition queries (qROWSxSIZE), every page read: queries per second"
  [W5]="W5 transactions (commit-kK: K partitions; transfers: 8 workers): commits per second"
  [W6]="W6 secondary indexes (upsert: indexed against plain; queryN: index against a filter scan): operations per second"
)
kinds=()
for kind in W1 W2 W3 W4 W5 W6; do
  pivot "$kind" > "$tmp/$kind"
  [ "$(wc -l < "$tmp/$kind")" -gt 1 ] && kinds+=("$kind")
done
[ ${#kinds[@]} -gt 0 ] || { echo "plot: no rows in $csv" >&2; exit 1; }
{
  cat <<GP
set terminal pngcairo size 1400,$((520 * ${#kinds[@]})) noenhanced
set output "$png"
set multiplot layout ${#kinds[@]},1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set key outside right
set xtics rotate by -30
GP
  for kind in "${kinds[@]}"; do
    echo "set title \"${title[$kind]} (log scale)\""
    echo "set yrange [*:*]"
    echo "plot for [i=2:$(head -1 "$tmp/$kind" | wc -w)] \"$tmp/$kind\" using i:xtic(1) title columnheader(i)"
  done
  echo "unset multiplot"
} | gnuplot
