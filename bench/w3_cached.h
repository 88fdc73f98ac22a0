// SPDX-License-Identifier: Apache-2.0
// W3: reads of an Azure store through the local cache, by read policy,
// against uncached reads and against the embedded store's
// (docs/performance.md#the-benchmark-suite).
#ifndef BLOBTABLE_BENCH_W3_CACHED_H_
#define BLOBTABLE_BENCH_W3_CACHED_H_

#include <string>
#include <vector>

#include "bench/harness.h"
#include "bench/w2_remote.h"

namespace bench {

struct W3Options {
  int rounds = 5;
  int64_t remote_ops = 100;   // a round of reads that ask storage
  int64_t local_ops = 20000;  // a round of reads answered here
  size_t value_bytes = 1000;
  std::vector<W2Endpoint> endpoints;
  std::vector<std::string> systems;  // empty: every system
};

// Rows with workload "W3-<ms>ms", op "get", one thread; systems: embedded
// (the local store's get: the reference, the speed max-stale and offline
// should reach), uncached, fresh (a 304 revalidation), max-stale, offline.
blobtable::Result<std::vector<Row>> RunW3(const W3Options& options);

}  // namespace bench

#endif  // BLOBTABLE_BENCH_W3_CACHED_H_
