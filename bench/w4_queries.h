// SPDX-License-Identifier: Apache-2.0
// W4: partition queries on an Azure store, cold, cached and with 1 % of
// the rows changed behind the store's back, against a GET per row and
// against Azurite's own Table service (docs/performance.md#the-benchmark-suite).
#ifndef BLOBTABLE_BENCH_W4_QUERIES_H_
#define BLOBTABLE_BENCH_W4_QUERIES_H_

#include <string>
#include <vector>

#include "bench/harness.h"
#include "bench/w2_remote.h"

namespace bench {

struct W4Options {
  int rounds = 5;
  std::vector<int64_t> rows = {100, 1000, 10000};
  std::vector<size_t> value_bytes = {1000, 64000};  // "1k" and "64k" entities
  // Cells larger than this many bytes of entities are left out (loading
  // them into Azurite in memory costs more than the suite's budget).
  int64_t max_cell_bytes = 80'000'000;
  // Cells with more rows than this are left out at an added latency (a GET
  // per row, one worker in eight, 10 ms each: a minute a cell).
  int64_t max_rows_with_latency = 1000;
  // The GET per row is left out of cells with more rows than this (10,000
  // GETs: 30 s a cell, and 100 and 1,000 rows show how it grows).
  int64_t max_rows_get_per_row = 1000;
  std::vector<W2Endpoint> endpoints;        // the blob service, through each proxy
  std::vector<W2Endpoint> table_endpoints;  // the Table service, same latencies; may be empty
  std::vector<std::string> systems;         // empty: every system
  std::string tables_script = "bench/tables_peer.mjs";  // run with `node`
};

// Rows with workload "W4-<ms>ms", op "q<rows>x<1k|64k>", one query an
// operation (every page read); systems: cold (the reference: a fresh
// cache), cached (a warm cache, nothing changed), changed-1pct (a warm
// cache, 1 % of the rows rewritten by another client before each query;
// both caches warmed once and kept from round to round, as a long-lived
// client's), get-per-row (a GET of each row by key, eight at once, no cache),
// tables-sdk (@azure/data-tables querying the partition on Azurite's
// Table service).
blobtable::Result<std::vector<Row>> RunW4(const W4Options& options);

}  // namespace bench

#endif  // BLOBTABLE_BENCH_W4_QUERIES_H_
