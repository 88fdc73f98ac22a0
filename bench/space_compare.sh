#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# File sizes side by side (issue 57; docs/performance.md#where-the-bytes-go):
# the same rows in blobtable's embedded store and in sqlite3 (a typed
# WITHOUT ROWID table keyed by PartitionKey and RowKey), loaded by import,
# by restore and by single puts in random order; after a scattered delete of
# half the rows, then `compact` against VACUUM and a fresh load of what
# remains; and 1,500 rows under a 470-character PartitionKey against the
# same rows under short keys. Where blobtable's bytes go (space_breakdown).
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
# Rows as the issue describes them: Double, Int32, Boolean and strings of
# 5-300 and 5-60 characters, 1,000 partitions, written partition after
# partition in turn (input order), and the same rows shuffled.
python3 - "$rows" "$work" <<'PY'
import json, random, sys
rows, work = int(sys.argv[1]), sys.argv[2]
rng = random.Random(57)
words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split()
def text(lo, hi):
    n, s = rng.randint(lo, hi), ""
    while len(s) < n: s += rng.choice(words) + " "
    return s[:n]
out = [{"PartitionKey": "customer-%04d" % (i % 1000), "RowKey": "order-%07d" % i,
        "total": round(rng.uniform(0, 500), 2), "items": rng.randint(1, 30),
        "paid": rng.random() < 0.5, "region": rng.choice(["north", "south", "east", "west"]),
        "note": text(5, 300), "address": text(5, 60)} for i in range(rows)]
def write(name, items):
    with open(f"{work}/{name}", "w") as f:
        for r in items: f.write(json.dumps(r) + "\n")
write("rows.jsonl", out)
write("unpaid.jsonl", [r for r in out if not r["paid"]])
shuffled = out[:]; rng.shuffle(shuffled); write("shuffled.jsonl", shuffled)
long_pk = "k" * 470
write("long.jsonl", [dict(out[i], PartitionKey=long_pk) for i in range(1500)])
write("short.jsonl", [dict(out[i], PartitionKey="p") for i in range(1500)])
PY
echo "input: $rows rows, $(size "$work/rows.jsonl") bytes of JSON lines, in $base"
# sqlite3: the rows typed, loaded in one transaction in the file's order,
# or one autocommit INSERT a row (python3's sqlite3 module, the same library).
sqlite_load() {  # DB FILE [single]
  python3 - "$@" <<'PY'
import json, sqlite3, sys
db, path = sys.argv[1], sys.argv[2]
single = len(sys.argv) > 3
c = sqlite3.connect(db, isolation_level=None)
c.execute("CREATE TABLE IF NOT EXISTS orders(pk TEXT, rk TEXT, total REAL, items INTEGER, "
          "paid INTEGER, region TEXT, note TEXT, address TEXT, PRIMARY KEY(pk, rk)) WITHOUT ROWID")
rows = [json.loads(l) for l in open(path)]
sql = "INSERT INTO orders VALUES (?,?,?,?,?,?,?,?)"
vals = [(r["PartitionKey"], r["RowKey"], r["total"], r["items"], r["paid"], r["region"],
         r["note"], r["address"]) for r in rows]
if single:
    for v in vals: c.execute(sql, v)
else:
    c.execute("BEGIN"); c.executemany(sql, vals); c.execute("COMMIT")
c.close()
PY
}
ratio() { python3 -c "print(f'{$1 / $2:.2f}x')"; }
row() { printf '%-52s %12s %12s %8s\n' "$@"; }
row "" "blobtable" "sqlite3" "ratio"

cli "$work/import" import orders --quiet < "$work/rows.jsonl"
sqlite_load "$work/import.sqlite" "$work/rows.jsonl"
b=$(size "$work/import/data.mdb"); s=$(size "$work/import.sqlite")
row "loaded by import (sqlite3: one transaction)" "$b" "$s" "$(ratio "$b" "$s")"
bodies=$(cli "$work/import" stats | python3 -c "import json,sys; print(json.load(sys.stdin)['tables'][0]['bytes'])")
compacted=$(cli "$work/import" stats | python3 -c "import json,sys; print(json.load(sys.stdin)['file']['compacted_bytes'])")
"$build/bench/space_breakdown" "$work/import" "$bodies" > "$work/breakdown.txt"

cli "$work/import" backup "$work/dump" --export --quiet
cli "$work/restore" restore "$work/dump" --quiet
b=$(size "$work/restore/data.mdb")
row "loaded by restore of an export" "$b" "$s" "$(ratio "$b" "$s")"

"$build/bench/single_puts" "$work/puts" orders < "$work/shuffled.jsonl" > /dev/null
sqlite_load "$work/puts.sqlite" "$work/shuffled.jsonl" single
b=$(size "$work/puts/data.mdb"); s=$(size "$work/puts.sqlite")
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
  sqlite_load "$work/$keys.sqlite" "$work/$keys.jsonl"
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
