# SPDX-License-Identifier: Apache-2.0
# The rows of issue 57's comparisons (bench/space_compare.sh, bench/scan_compare.sh):
# ROWS orders in 1,000 partitions, each with a Double (total), an Int32
# (items), a Boolean (paid) and three Strings (region, note of 5-300
# characters, address of 5-60), the same for a seed. Writes into DIR:
#   rows.jsonl      partition after partition in turn (input order)
#   shuffled.jsonl  the same rows in random order
#   unpaid.jsonl    the rows with paid false
#   long.jsonl, short.jsonl  the first 1,500 rows under a 470-character
#                   PartitionKey, and under "p"
#   rows.sqlite, long.sqlite, short.sqlite  sqlite3: those rows in a typed
#                   WITHOUT ROWID table keyed by (pk, rk), one transaction in
#                   input order (with SINGLE also shuffled.sqlite: one
#                   autocommit INSERT a row, in random order)
#   python3 bench/gen_orders.py ROWS DIR [SINGLE]
import json
import random
import sqlite3
import sys

rows, work = int(sys.argv[1]), sys.argv[2]
single = len(sys.argv) > 3
rng = random.Random(57)
words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split()


def text(lo, hi):
    n, s = rng.randint(lo, hi), ""
    while len(s) < n:
        s += rng.choice(words) + " "
    return s[:n]


out = [{"PartitionKey": "customer-%04d" % (i % 1000), "RowKey": "order-%07d" % i,
        "total": round(rng.uniform(0, 500), 2), "items": rng.randint(1, 30),
        "paid": rng.random() < 0.5, "region": rng.choice(["north", "south", "east", "west"]),
        "note": text(5, 300), "address": text(5, 60)} for i in range(rows)]


def write(name, items):
    with open(f"{work}/{name}", "w") as f:
        for r in items:
            f.write(json.dumps(r) + "\n")


def load(name, items, one_by_one):
    c = sqlite3.connect(f"{work}/{name}", isolation_level=None)
    c.execute("CREATE TABLE orders(pk TEXT, rk TEXT, total REAL, items INTEGER, paid INTEGER, "
              "region TEXT, note TEXT, address TEXT, PRIMARY KEY(pk, rk)) WITHOUT ROWID")
    sql = "INSERT INTO orders VALUES (?,?,?,?,?,?,?,?)"
    vals = [(r["PartitionKey"], r["RowKey"], r["total"], r["items"], r["paid"], r["region"],
             r["note"], r["address"]) for r in items]
    if one_by_one:
        for v in vals:
            c.execute(sql, v)
    else:
        c.execute("BEGIN")
        c.executemany(sql, vals)
        c.execute("COMMIT")
    c.close()


write("rows.jsonl", out)
write("unpaid.jsonl", [r for r in out if not r["paid"]])
shuffled = out[:]
rng.shuffle(shuffled)
write("shuffled.jsonl", shuffled)
long_keys = [dict(out[i], PartitionKey="k" * 470) for i in range(min(rows, 1500))]
short_keys = [dict(out[i], PartitionKey="p") for i in range(min(rows, 1500))]
write("long.jsonl", long_keys)
write("short.jsonl", short_keys)
load("rows.sqlite", out, False)
load("long.sqlite", long_keys, False)
load("short.sqlite", short_keys, False)
if single:
    load("shuffled.sqlite", shuffled, True)
