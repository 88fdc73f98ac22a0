// SPDX-License-Identifier: Apache-2.0
// W1: the embedded store against SQLite, RocksDB and raw LMDB, one process,
// the same value bytes and key order (docs/performance.md#the-benchmark-suite).
#ifndef BLOBTABLE_BENCH_W1_EMBEDDED_H_
#define BLOBTABLE_BENCH_W1_EMBEDDED_H_

#include <string>
#include <vector>

#include "bench/harness.h"

namespace bench {

struct W1Options {
  int rounds = 5;
  // At 1 and 2 threads; beyond, 2 x this a round, shared by the threads.
  // Range queries: a tenth of that.
  int64_t ops_per_thread = 1500;
  std::vector<int> threads = {1, 2, 8};
  size_t value_bytes = 1000;
  std::vector<std::string> ops = {"insert", "get", "replace", "range100"};
  std::vector<std::string> systems;  // empty: every system
};

blobtable::Result<std::vector<Row>> RunW1(const W1Options& options);

}  // namespace bench

#endif  // BLOBTABLE_BENCH_W1_EMBEDDED_H_
