#!/usr/bin/env bash
# Draws bench/results/latest.png from the suite's CSV: one panel per kind of
# workload (W1 embedded, W2 remote, W3 cached reads), each cell (operation, threads or
# concurrency, added latency) with every system's ops/s, log scale.
# Args: CSV PNG
set -euo pipefail
csv="$1" png="$2"
w1="$(mktemp)" w2="$(mktemp)" w3="$(mktemp)"
trap 'rm -f "$w1" "$w2" "$w3"' EXIT
# Pivot the rows whose workload matches $1: one line per cell, one column per
# system (in the CSV's order).
pivot() {
  awk -F, -v want="$1" 'NR > 1 && $1 ~ want {
    cell = $2 "/" $3 "t"
    if ($1 ~ /^W[23]-/) { sub(/^W[23]-/, "", $1); cell = $2 "/c" $3 "@" $1 }
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
pivot '^W1$' > "$w1"
pivot '^W2-' > "$w2"
pivot '^W3-' > "$w3"
has_w2=0 has_w3=0
[ "$(wc -l < "$w2")" -gt 1 ] && has_w2=1
[ "$(wc -l < "$w3")" -gt 1 ] && has_w3=1
panels=$((1 + has_w2 + has_w3))
gnuplot <<GP
set terminal pngcairo size 1400,$((520 * panels)) noenhanced
set output "$png"
set multiplot layout $panels,1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set key outside right
set xtics rotate by -30
set title "W1 embedded: operations per second (log scale; range100: queries of 100 rows)"
set yrange [100:*]
plot for [i=2:$(head -1 "$w1" | wc -w)] "$w1" using i:xtic(1) title columnheader(i)
if ($has_w2) {
  set title "W2 remote (Azurite through the latency proxy): operations per second (log scale; cN@M: N at once, M ms added)"
  set yrange [10:*]
  plot for [i=2:$(head -1 "$w2" | wc -w)] "$w2" using i:xtic(1) title columnheader(i)
}
if ($has_w3) {
  set title "W3 reads of an Azure store by read policy, and the embedded get: reads per second (log scale)"
  set yrange [10:*]
  plot for [i=2:$(head -1 "$w3" | wc -w)] "$w3" using i:xtic(1) title columnheader(i)
}
unset multiplot
GP
