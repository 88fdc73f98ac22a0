// SPDX-License-Identifier: Apache-2.0
// W5: multi-partition transactions on an Azure store through the latency
// proxy: commit latency and requests by partitions touched, against the
// same writes made plainly and against Azurite's Table service entity group
// transaction; and transfers under contention (docs/performance.md#the-benchmark-suite).
#ifndef BLOBTABLE_BENCH_W5_TRANSACTIONS_H_
#define BLOBTABLE_BENCH_W5_TRANSACTIONS_H_

#include <string>
#include <vector>

#include "bench/harness.h"
#include "bench/w2_remote.h"

namespace bench {

struct W5Options {
  int rounds = 5;
  std::vector<int> partitions = {1, 2, 4, 8};       // k
  int commits = 8;                                  // a round of a commit-k cell
  int workers = 8;                                  // contention
  int accounts = 16;                                // contention, one partition each
  int attempts = 10;                                // a worker's transfers a round
  std::vector<int> hot_workers = {1, 2, 4, 8, 16};  // hot-partition cells
  int hot_commits = 10;                             // a worker's commits a round there
  std::vector<W2Endpoint> endpoints;                // the blob service, through each proxy
  std::vector<W2Endpoint> table_endpoints;  // the Table service, same latencies; may be empty
  std::vector<std::string> systems;         // empty: every system
  std::vector<std::string> ops;             // commit, hot-partition, transfer; empty: all
  std::string tables_script = "bench/tables_peer.mjs";  // run with `node`
};

// Rows with workload "W5-<ms>ms":
// - op "commit-k<k>": a transaction that has read one entity in each of k
//   partitions replaces them; only Commit() is timed. Systems: blobtable-txn
//   (the reference; requests_per_op counts the finishing after Commit()
//   returned too, rates give requests_before_return), plain-writes (the
//   same k replaces made plainly, one after another: the price of
//   atomicity), round-trip (a HEAD: one round trip, what the commit's
//   latency is read against), and for k = 1 tables-egt (an entity group transaction of
//   one replace on Azurite's Table service).
// - op "transfer-random" and "transfer-opposite", `workers` threads: each
//   transaction reads two of `accounts` accounts and moves 1 between them,
//   random pairs or pairs shared by two workers going opposite ways;
//   ops/s = commits/s, p50/p99 of a committed transaction; rates:
//   conflicts, lock_waits and lock_timeouts per commit attempt. Fails if
//   money is not conserved.
// - op "hot-partition", one cell per count in `hot_workers` (issue 32,
//   goal 1): threads sharing one store, each committing `hot_commits`
//   transactions that read and replace its own two rows, in one partition
//   (blobtable-txn-one-partition) or in a partition per thread
//   (blobtable-txn-own-partitions), against tables-egt-one-partition (the
//   same pairs by entity group transactions on Azurite's Table service).
//   ops/s = commits/s; p50/p99 of a whole transaction; rates: lock_waits.
//   At most 3 rounds whatever `rounds` says, and only through proxies that
//   add latency when there are several (the suite's time).
blobtable::Result<std::vector<Row>> RunW5(const W5Options& options);

}  // namespace bench

#endif  // BLOBTABLE_BENCH_W5_TRANSACTIONS_H_
