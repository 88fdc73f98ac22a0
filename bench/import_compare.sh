#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `blobtable import` into the embedded store against sqlite3 loading the same
# JSON lines in one transaction (WAL, synchronous=FULL; the line kept whole,
# keyed by PartitionKey and RowKey), interleaved in rounds on the same disk.
#   bench/import_compare.sh BUILD_DIR [ROWS] [ROUNDS]      (defaults: 100000 rows, 3 rounds)
# Prints each round's seconds and the ratio (sqlite3's time / blobtable's).
set -euo pipefail
build=${1:?usage: bench/import_compare.sh BUILD_DIR [ROWS] [ROUNDS]}
rows=${2:-100000}
rounds=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$rows" > "$work/rows.jsonl" <<'PY'
import json, sys
for i in range(int(sys.argv[1])):
    print(json.dumps({"PartitionKey": "p%03d" % (i % 100), "RowKey": "r%07d" % i, "n": i,
                      "s": "x" * 370}))
PY
echo "input: $rows rows, $(stat -c %s "$work/rows.jsonl") bytes"
seconds() {  # wall seconds of a command (bash's clock; no bc on a bare machine)
  local t0=$EPOCHREALTIME
  "$@" > /dev/null
  python3 -c "print(round($EPOCHREALTIME - $t0, 2))"
}
unit=$'\x1f'  # a column separator no JSON line holds: each line is one column
for round in $(seq 1 "$rounds"); do
  rm -rf "$work/store" "$work/db.sqlite"*
  b=$(seconds "$build/blobtable" --store "$work/store" import orders --quiet < "$work/rows.jsonl")
  s=$(seconds sqlite3 "$work/db.sqlite" \
    "PRAGMA journal_mode=WAL;" "PRAGMA synchronous=FULL;" \
    "CREATE TABLE raw(line TEXT);" \
    "CREATE TABLE t(pk TEXT, rk TEXT, body TEXT, PRIMARY KEY(pk, rk)) WITHOUT ROWID;" \
    ".separator \"$unit\" \"\\n\"" ".import $work/rows.jsonl raw" \
    "BEGIN;" \
    "INSERT INTO t SELECT json_extract(line,'\$.PartitionKey'), json_extract(line,'\$.RowKey'), line FROM raw;" \
    "COMMIT;")
  loaded=$(sqlite3 "$work/db.sqlite" "SELECT count(*) FROM t;")
  counted=$("$build/blobtable" --store "$work/store" count orders)
  [ "$loaded" = "$rows" ] && [ "$counted" = "$rows" ] ||
    { echo "import_compare: sqlite3 holds $loaded rows, blobtable $counted: not $rows" >&2; exit 1; }
  echo "round $round: blobtable ${b} s, sqlite3 ${s} s, sqlite3/blobtable $(python3 -c "print(round($s / $b, 2))")"
done
