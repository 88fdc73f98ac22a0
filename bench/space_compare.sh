#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# File sizes side by side (issue 57; docs/performance.md#where-the-bytes-go):
# the same rows in blobtable's embedded store and in sqlite3 (a typed
# WITHOUT ROWID table keyed by PartitionKey and RowKey), loaded by import,
# by restore and by single puts in random order; after a scattered delete of
# half the rows, then `compact` against VACUUM and a fresh load of what
# remains; and 1,500 rows under a 470-character PartitionKey against the
# same rows under short keys. Where blobtable's bytes go (space_breakdown), after
# the import and after the restore (rows in key order).
#   bench/space_compare.sh BUILD_DIR [ROWS]     (default 100000 rows in 1,000 partitions)
# The stores live in /dev/shm when there is one (sizes, not speed, are
# measured: single puts there skip the disk's syncs).
set -euo pipefail
build=${1:?usage: bench/space_compare.sh BUILD_DIR [ROWS]}
rows=${2:-100000}
base=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm
work=$(mktemp -d -p "$base")
trap 'rm -rf "$work"' EXIT
cli() { "$build/blobtable" --store "$@"; }
size() { stat -c %s "$1"; }
# The rows (bench/gen_orders.py) as JSON lines and in sqlite3.
python3 "$(dirname "$0")/gen_orders.py" "$rows" "$work" single
echo "input: $rows rows, $(size "$work/rows.jsonl") bytes of JSON lines, in $base"
ratio() { python3 -c "print(f'{$1 / $2:.2f}x')"; }
row() { printf '%-52s %12s %12s %8s\n' "$@"; }
row "" "blobtable" "sqlite3" "ratio"

cli "$work/import" import orders --quiet < "$work/rows.jsonl"
cp "$work/rows.sqlite" "$work/import.sqlite"
b=$(size "$work/import/data.mdb"); s=$(size "$work/import.sqlite")
row "loaded by import (sqlite3: one transaction)" "$b" "$s" "$(ratio "$b" "$s")"
bodies=$(cli "$work/import" stats | python3 -c "import json,sys; print(json.load(sys.stdin)['tables'][0]['bytes'])")
compacted=$(cli "$work/import" stats | python3 -c "import json,sys; print(json.load(sys.stdin)['file']['compacted_bytes'])")
"$build/bench/space_breakdown" "$work/import" "$bodies" > "$work/breakdown.txt"

cli "$work/import" backup "$work/dump" --export --quiet
cli "$work/restore" restore "$work/dump" --quiet
b=$(size "$work/restore/data.mdb")
"$build/bench/space_breakdown" "$work/restore" "$bodies" > "$work/breakdown-restore.txt"
row "loaded by restore of an export" "$b" "$s" "$(ratio "$b" "$s")"

"$build/bench/single_puts" "$work/puts" orders < "$work/shuffled.jsonl" > /dev/null
b=$(size "$work/puts/data.mdb"); s=$(size "$work/shuffled.sqlite")
row "single puts in random order (sqlite3: autocommit)" "$b" "$s" "$(ratio "$b" "$s")"

cli "$work/import" compact --quiet
cp "$work/import.sqlite" "$work/vacuumed.sqlite"
sqlite3 "$work/vacuumed.sqlite" "VACUUM;"
b=$(size "$work/import/data.mdb"); s=$(size "$work/vacuumed.sqlite")
row "the import after compact / VACUUM (stats said $compacted)" "$b" "$s" "$(ratio "$b" "$s")"

cli "$work/import" delete orders --filter "paid eq true" --quiet
sqlite3 "$work/import.sqlite" "DELETE FROM orders WHERE paid = 1;"
before=$(size "$work/import/data.mdb")
cli "$work/import" compact --quiet
sqlite3 "$work/import.sqlite" "VACUUM;"
b=$(size "$work/import/data.mdb"); s=$(size "$work/import.sqlite")
row "half deleted (scattered), then compact / VACUUM" "$b" "$s" "$(ratio "$b" "$s")"
cli "$work/fresh" import orders --quiet < "$work/unpaid.jsonl"
f=$(size "$work/fresh/data.mdb")
echo "  blobtable: $before bytes before compact; a fresh import of the rows left: $f bytes;" \
  "compacted / fresh $(ratio "$b" "$f")"

for keys in short long; do
  cli "$work/$keys" import orders --quiet < "$work/$keys.jsonl"
done
bl=$(size "$work/long/data.mdb"); bs=$(size "$work/short/data.mdb")
sl=$(size "$work/long.sqlite"); ss=$(size "$work/short.sqlite")
row "1,500 rows, 470-char PartitionKey / 1-char" "$(ratio "$bl" "$bs")" "$(ratio "$sl" "$ss")" ""
echo "  blobtable $bl / $bs bytes, sqlite3 $sl / $ss bytes"
cli "$work/long" compact --quiet
cli "$work/short" compact --quiet
bl=$(size "$work/long/data.mdb"); bs=$(size "$work/short/data.mdb")
echo "  after compact: blobtable $bl / $bs bytes ($(ratio "$bl" "$bs"))"
echo
echo "where the bytes of the import go:"
cat "$work/breakdown.txt"
echo
echo "where the bytes of the restore go:"
cat "$work/breakdown-restore.txt"
