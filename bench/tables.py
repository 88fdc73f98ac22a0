#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints the tables of docs/performance.md#figures (Markdown) from the suite's CSV.

    bench/tables.py [bench/results/latest.csv]

Each table is one workload kind; ratios are the CSV's (the reference
system's ops/s over each system's, medians of per-round ratios).
"""
import csv
import sys


def fmt(x, digits=0):
    return f"{x:,.{digits}f}"


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def cells(rows, kind):
    """{(workload, op, threads): {system: row}} in the CSV's order."""
    out = {}
    for r in rows:
        w = r["workload"]
        if w == kind or w.startswith(kind + "-"):
            out.setdefault((w, r["op"], int(r["threads"])), {})[r["system"]] = r
    return out


def rtt(workload):
    return workload.split("-", 1)[1] if "-" in workload else ""


def w1(rows):
    systems = [("blobtable-relaxed", "relaxed"), ("sqlite-wal-full", "SQLite FULL"),
               ("sqlite-wal-normal", "SQLite NORMAL"), ("rocksdb-sync", "RocksDB sync"),
               ("rocksdb-nosync", "RocksDB no sync"), ("lmdb-raw", "raw LMDB")]
    print("| op, threads | blobtable | " + " | ".join(n for _, n in systems) + " |")
    print("|---" * (len(systems) + 2) + "|")
    for (_, op, t), s in cells(rows, "W1").items():
        line = [f"{op}, {t}", fmt(float(s["blobtable"]["ops_per_s"]))]
        for key, _ in systems:
            r = s.get(key)
            line.append(f"{fmt(float(r['ops_per_s']))} ({float(r['ratio']):.2f})" if r else "-")
        print("| " + " | ".join(line) + " |")


def w2(rows):
    print("| added RTT, op, at once | blobtable curl | blobtable cpprest | official SDK (JS) |")
    print("|---|---|---|---|")
    for (w, op, t), s in cells(rows, "W2").items():
        line = [f"{rtt(w)}, {op}, {t}"]
        for key in ["blobtable-curl", "blobtable-cpprest", "sdk-js"]:
            r = s.get(key)
            if not r:
                line.append("-")
                continue
            ratio = "" if key == "blobtable-curl" else f" ({float(r['ratio']):.2f})"
            line.append(f"{fmt(float(r['ops_per_s']))}{ratio}, {fmt(float(r['cpu_us_per_op']))} µs")
        print("| " + " | ".join(line) + " |")


def w3(rows):
    print("| added RTT | embedded get | uncached | fresh (304) | max-stale | offline |")
    print("|---|---|---|---|---|---|")
    for (w, _, _), s in cells(rows, "W3").items():
        ref = float(s["embedded"]["ops_per_s"])
        line = [rtt(w), fmt(ref)]
        for key in ["uncached", "fresh", "max-stale", "offline"]:
            r = s.get(key)
            if not r:
                line.append("-")
                continue
            req = f"{float(r['requests_per_op']):.0f} req"
            if key in ("max-stale", "offline"):
                line.append(f"{fmt(float(r['ops_per_s']))} ({1 / float(r['ratio']):.2f}×; {req})")
            else:
                line.append(f"{fmt(float(r['ops_per_s']))} ({req})")
        print("| " + " | ".join(line) + " |")


def w4(rows):
    systems = ["cold", "cached", "changed-1pct", "get-per-row", "tables-sdk"]
    print("| added RTT, rows × size | " + " | ".join(systems) + " |")
    print("|---" * (len(systems) + 1) + "|")
    for (w, op, _), s in cells(rows, "W4").items():
        rows_, size = op[1:].split("x")
        line = [f"{rtt(w)}, {fmt(int(rows_))} × {size.upper().replace('K', ' KB')}"]
        for key in systems:
            r = s.get(key)
            if not r:
                line.append("-")
                continue
            ms = float(r["p50_us"]) / 1000
            line.append(f"{ms:,.1f} ms, {float(r['requests_per_op']):,.0f} req")
        print("| " + " | ".join(line) + " |")


def w5(rows):
    print("| added RTT, op | blobtable txn | round trip | plain writes | Table service EGT |")
    print("|---|---|---|---|---|")
    contention, hot = [], []
    for (w, op, t), s in cells(rows, "W5").items():
        if op == "hot-partition":
            hot.append((w, t, s))
            continue
        if op.startswith("transfer"):
            contention.append((w, op, t, s["blobtable-txn"]))
            continue
        txn = s["blobtable-txn"]
        rates = dict(kv.split("=") for kv in txn["rates"].split(";") if kv)
        line = [f"{rtt(w)}, {op}",
                f"{float(txn['p50_us']) / 1000:.1f} ms, {float(rates.get('requests_before_return', 0)):.0f} / "
                f"{float(txn['requests_per_op']):.0f} req"]
        for key in ["round-trip", "plain-writes", "tables-egt"]:
            r = s.get(key)
            line.append(f"{float(r['p50_us']) / 1000:.1f} ms ({float(txn['p50_us']) / float(r['p50_us']):.2f}×)"
                        if r else "-")
        print("| " + " | ".join(line) + " |")
    print()
    print("| added RTT, transfers, workers | commits/s | p50, p99 of a commit | requests a commit | "
          "conflicts | lock waits | lock timeouts (per attempt) |")
    print("|---|---|---|---|---|---|---|")
    for w, op, t, r in contention:
        rates = dict(kv.split("=") for kv in r["rates"].split(";") if kv)
        print(f"| {rtt(w)}, {op.split('-', 1)[1]}, {t} | {float(r['ops_per_s']):.1f} | "
              f"{float(r['p50_us']) / 1000:.0f} ms, {float(r['p99_us']) / 1000:.0f} ms | "
              f"{float(r['requests_per_op']):.1f} | {rates.get('conflicts')} | {rates.get('lock_waits')} | "
              f"{rates.get('lock_timeouts')} |")
    if not hot:
        return
    print()
    print("| added RTT, workers | one partition | a partition each | one / each | "
          "p99 / p50, one partition | Table service EGT, one partition |")
    print("|---|---|---|---|---|---|")
    for w, t, s in hot:
        one, each = s.get("blobtable-txn-one-partition"), s.get("blobtable-txn-own-partitions")
        egt = s.get("tables-egt-one-partition")
        rate = lambda r: float(r["ops_per_s"]) if r else 0
        print(f"| {rtt(w)}, {t} | {rate(one):.1f} | {rate(each):.1f} | "
              f"{rate(one) / rate(each) if each else 0:.2f} | "
              f"{float(one['p99_us']) / float(one['p50_us']) if one else 0:.2f} | "
              f"{rate(egt):.1f} |")


def w6(rows):
    print("| where | indexed upsert / plain | requests, indexed / plain | index query / $filter scan | covered / scan | backfill, entities/s |")
    print("|---|---|---|---|---|---|")
    by_place = {}
    for (w, op, t), s in cells(rows, "W6").items():
        by_place.setdefault(w, {})[op] = s
    for w, ops in by_place.items():
        up = ops.get("upsert", {})
        query = next((s for op, s in ops.items() if op.startswith("query")), {})
        fill = ops.get("backfill", {}).get("index")
        plain, indexed = up.get("plain"), up.get("indexed")
        scan, index, covered = query.get("filter-scan"), query.get("index"), query.get("index-covered")
        ms = lambda r: float(r["p50_us"]) / 1000
        print(f"| {w.split('-', 1)[1]} | "
              f"{float(indexed['ratio']):.2f}x ({ms(indexed):.1f} / {ms(plain):.1f} ms) | "
              f"{float(indexed['requests_per_op']):.1f} / {float(plain['requests_per_op']):.1f} | "
              f"{ms(index) / ms(scan):.4f}x | {ms(covered) / ms(scan):.4f}x | "
              f"{float(fill['ops_per_s']):,.0f} |" if plain and indexed and scan and index and covered and fill
              else f"| {w} | incomplete |")


def main():
    rows = load(sys.argv[1] if len(sys.argv) > 1 else "bench/results/latest.csv")
    for name, table in [("W1", w1), ("W2", w2), ("W3", w3), ("W4", w4), ("W5", w5), ("W6", w6)]:
        if cells(rows, name):
            print(f"{name}:\n")
            table(rows)
            print()


if __name__ == "__main__":
    main()
