#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Scans and counts from the command line, side by side (issue 57, goal 3;
# docs/performance.md#scans-and-counts): the whole `blobtable` command,
# start-up included, against `sqlite3` on the same rows (bench/gen_orders.py:
# loaded by `import`, and by one sqlite3 transaction), each the median of
# RUNS runs, interleaved. The output goes to /dev/null; the last line, a
# query printing every row's one property, is the output path alone. Two
# lines measure the floor: a bare LMDB cursor over the same file
# (bench/lmdb_walk), with and without each record's CRC-32, against sqlite3's
# filtered query.
#   bench/scan_compare.sh BUILD_DIR [ROWS] [RUNS]   (defaults: 100000 rows, 9 runs)
set -euo pipefail
build=${1:?usage: bench/scan_compare.sh BUILD_DIR [ROWS] [RUNS]}
rows=${2:-100000}
runs=${3:-9}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$(dirname "$0")/gen_orders.py" "$rows" "$work"
"$build/blobtable" --store "$work/store" import orders --quiet < "$work/rows.jsonl"
python3 - "$runs" "$build/blobtable" "$work" <<'PY'
import os, statistics, subprocess, sys, time
runs, cli, work = int(sys.argv[1]), sys.argv[2], sys.argv[3]
bt = [cli, "--store", work + "/store"]
walk = [os.path.join(os.path.dirname(cli), "bench", "lmdb_walk"), work + "/store"]
filtered = "SELECT pk, rk, total FROM orders WHERE total >= 495.0 AND paid = 1"
sq = ["sqlite3", work + "/rows.sqlite"]
query = ("filtered query, 1 row in 100",
         bt + ["query", "orders", "--filter", "total ge 495.0 and paid eq true", "--select", "total"],
         sq + [filtered])
# The floor under the scans (bench/lmdb_walk.cc): a bare LMDB cursor reading
# every record of the same file, then with each record's CRC-32, against
# sqlite3's filtered query.
floor = [
    ("bare LMDB walk of the file", walk, sq + [filtered]),
    ("bare LMDB walk + CRC-32", walk + ["crc"], sq + [filtered]),
]
cases = [
    query,
    ("filtered count",
     bt + ["count", "orders", "--filter", "region eq 'north' and items gt 18"],
     sq + ["SELECT count(*) FROM orders WHERE region = 'north' AND items > 18"]),
    ("count", bt + ["count", "orders"], sq + ["SELECT count(*) FROM orders"]),
    *floor,
    ("every row's total printed", bt + ["query", "orders", "--select", "total"],
     sq + ["SELECT pk, rk, total FROM orders"]),
]
def run(cases):
    for name, a, b in cases:
        times = {0: [], 1: []}
        outs = {}
        for _ in range(runs):
            for i, argv in enumerate((a, b)):
                t0 = time.perf_counter()
                r = subprocess.run(argv, stdout=subprocess.PIPE, check=True)
                times[i].append((time.perf_counter() - t0) * 1000)
                outs[i] = r.stdout
        ta, tb = statistics.median(times[0]), statistics.median(times[1])
        lines = [o.count(b"\n") for o in (outs[0], outs[1])]
        print(f"{name:32s} {ta:8.1f} ms {tb:8.1f} ms {ta / tb:6.2f}x   ({lines[0]} / {lines[1]} lines)")

print(f"{'':32s} {'blobtable':>10s} {'sqlite3':>10s} {'ratio':>7s}")
run(cases)
# The same file compacted (full pages, key order: bench/space_compare.sh).
subprocess.run(bt + ["compact", "--quiet"], stdout=subprocess.DEVNULL, check=True)
print("after `compact`:")
run([query] + floor)
PY
