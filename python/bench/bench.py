# SPDX-License-Identifier: Apache-2.0
"""blobtable from Python against Python's own sqlite3 doing the same
(docs/performance.md#python): a get by key, an upsert (each its own durable
commit), and a 1,000-row query of one partition returned as dicts.

    python3 python/bench/bench.py [--rounds N] [--quick] [DIR]

Prints, per operation, each side's median time per operation over the
rounds and the ratio blobtable / sqlite3 (below 1: blobtable is faster).
Both stores live in DIR (default: a temporary directory; /dev/shm where
there is one, as the C++ suite's runs). sqlite3 runs in WAL mode with
synchronous=FULL, so that each commit is synced as blobtable's are."""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from typing import Callable, Dict, List

import blobtable

ROWS = 1000  # in the queried partition


def props(i: int) -> Dict[str, object]:
    return {"name": f"customer {i}", "total": i * 1.5, "items": i % 7, "paid": i % 2 == 0,
            "note": "x" * 40}


def timed(fn: Callable[[], None], ops: int) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) / ops


class Blobtable:
    def __init__(self, where: str) -> None:
        self.store = blobtable.open(where)
        self.t = self.store.table("orders")

    def load(self) -> None:
        for i in range(ROWS):
            self.t.upsert(blobtable.Entity("p", f"r{i:05}", props(i)))

    def gets(self, n: int) -> None:
        g = self.t.get
        for i in range(n):
            g("p", f"r{i % ROWS:05}")

    def upserts(self, n: int) -> None:
        u = self.t.upsert
        for i in range(n):
            u(blobtable.Entity("u", f"r{i:05}", props(i)))

    def query(self) -> None:
        rows = list(self.t.query(partition_key="p"))
        assert len(rows) == ROWS

    def close(self) -> None:
        self.store.close()


class Sqlite:
    def __init__(self, where: str) -> None:
        self.db = sqlite3.connect(os.path.join(where, "bench.db"), isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("CREATE TABLE orders (pk TEXT, rk TEXT, name TEXT, total REAL, items "
                        "INTEGER, paid INTEGER, note TEXT, PRIMARY KEY (pk, rk)) WITHOUT ROWID")
        self.cols = ["PartitionKey", "RowKey", "name", "total", "items", "paid", "note"]

    def _put(self, pk: str, rk: str, i: int) -> None:
        p = props(i)
        self.db.execute("INSERT OR REPLACE INTO orders VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (pk, rk, p["name"], p["total"], p["items"], p["paid"], p["note"]))

    def load(self) -> None:
        for i in range(ROWS):
            self._put("p", f"r{i:05}", i)

    def gets(self, n: int) -> None:
        cur = self.db.cursor()
        cols = self.cols
        for i in range(n):
            row = cur.execute("SELECT * FROM orders WHERE pk = ? AND rk = ?",
                              ("p", f"r{i % ROWS:05}")).fetchone()
            dict(zip(cols, row))

    def upserts(self, n: int) -> None:
        for i in range(n):
            self._put("u", f"r{i:05}", i)

    def query(self) -> None:
        cols = self.cols
        rows = [dict(zip(cols, r)) for r in
                self.db.execute("SELECT * FROM orders WHERE pk = ? ORDER BY rk", ("p",)).fetchall()]
        assert len(rows) == ROWS

    def close(self) -> None:
        self.db.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="a few operations: a sanity run")
    a = ap.parse_args()
    gets, upserts, queries = (200, 20, 2) if a.quick else (20000, 500, 20)
    base = a.dir or tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    results: Dict[str, Dict[str, List[float]]] = {}
    try:
        for round_ in range(a.rounds):
            for name, make in (("blobtable", Blobtable), ("sqlite3", Sqlite)):
                where = os.path.join(base, f"{name}-{round_}")
                os.makedirs(where)
                side = make(where)
                side.load()
                r = results.setdefault(name, {"get": [], "upsert": [], "query row": []})
                r["get"].append(timed(lambda: side.gets(gets), gets))
                r["upsert"].append(timed(lambda: side.upserts(upserts), upserts))
                r["query row"].append(
                    timed(lambda: [side.query() for _ in range(queries)], queries * ROWS))
                side.close()
                shutil.rmtree(where)
    finally:
        if not a.dir:
            shutil.rmtree(base, ignore_errors=True)
    print(f"{'operation':<10} {'blobtable us':>13} {'sqlite3 us':>11} {'ratio':>6}  "
          f"(median of {a.rounds} rounds; ratio = blobtable / sqlite3)")
    for op in ("get", "upsert", "query row"):
        b = statistics.median(results["blobtable"][op]) * 1e6
        s = statistics.median(results["sqlite3"][op]) * 1e6
        print(f"{op:<10} {b:13.2f} {s:11.2f} {b / s:6.2f}")


if __name__ == "__main__":
    main()
