#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The start-up cost of a CLI call: `blobtable get` of one entity of an
# embedded store, and `blobtable --version`, against `sqlite3 DB "SELECT 1"`
# measured in the same rounds (interleaved). Each figure is the median of
# RUNS calls in milliseconds.
#   bench/cli_startup.sh BUILD_DIR [RUNS]      (default: 200 calls each)
set -euo pipefail
build=${1:?usage: bench/cli_startup.sh BUILD_DIR [RUNS]}
runs=${2:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo '{"PartitionKey":"p","RowKey":"r","n":1}' | "$build/blobtable" --store "$work/store" put orders > /dev/null
sqlite3 "$work/db.sqlite" "CREATE TABLE t(x);"
python3 - "$runs" "$build/blobtable" "$work" <<'PY'
import statistics, subprocess, sys, time
runs, cli, work = int(sys.argv[1]), sys.argv[2], sys.argv[3]
calls = {
    "blobtable get (embedded)": [cli, "--store", work + "/store", "get", "orders", "p", "r"],
    "blobtable --version": [cli, "--version"],
    "sqlite3 SELECT 1": ["sqlite3", work + "/db.sqlite", "SELECT 1"],
}
times = {name: [] for name in calls}
for _ in range(runs):
    for name, argv in calls.items():
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
        times[name].append((time.perf_counter() - t0) * 1000)
base = statistics.median(times["sqlite3 SELECT 1"])
for name, t in times.items():
    m = statistics.median(t)
    print(f"{name:28s} {m:6.2f} ms   {m / base:4.1f}x sqlite3")
PY
