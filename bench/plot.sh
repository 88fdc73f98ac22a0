#!/usr/bin/env bash
# Draws bench/results/latest.png from the suite's CSV: for each workload
# cell (operation, threads), every system's ops/s, log scale. Args: CSV PNG
set -euo pipefail
csv="$1" png="$2"
table="$(mktemp)"
trap 'rm -f "$table"' EXIT
# Pivot: one line per cell, one column per system (in the CSV's order).
awk -F, 'NR > 1 {
  cell = $2 "/" $3 "t"
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
}' "$csv" > "$table"
systems=$(head -1 "$table" | wc -w)
gnuplot <<GP
set terminal pngcairo size 1400,600 noenhanced
set output "$png"
set title "W1 embedded: operations per second (log scale; range100: queries of 100 rows)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [100:*]
set key outside right
set xtics rotate by -30
plot for [i=2:$systems] "$table" using i:xtic(1) title columnheader(i)
GP
