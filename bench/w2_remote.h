// SPDX-License-Identifier: Apache-2.0
// W2: the Azure backend against the official Azure Storage SDK for
// JavaScript on the same Azurite, through the latency proxy, both of
// blobtable's HTTP transports (docs/performance.md#the-benchmark-suite).
#ifndef BLOBTABLE_BENCH_W2_REMOTE_H_
#define BLOBTABLE_BENCH_W2_REMOTE_H_

#include <string>
#include <vector>

#include "bench/harness.h"
#include "blobtable/options.h"
#include "blobtable/table.h"
#include "testing/counting_blob_store.h"

namespace bench {

struct W2Endpoint {
  int added_rtt_ms = 0;  // what the proxy at `port` adds to a round trip
  int port = 0;          // a blobtable-proxy in front of Azurite
};

struct W2Options {
  int rounds = 5;
  int64_t ops_per_round = 120;  // shared by the workers of a round
  std::vector<int> concurrency = {1, 16};
  size_t value_bytes = 1000;
  std::vector<W2Endpoint> endpoints;
  std::vector<std::string> ops = {"get", "upsert", "replace"};
  std::vector<std::string> systems;               // empty: every system
  std::string sdk_script = "bench/sdk_peer.mjs";  // run with `node`
};

// The connection string of Azurite's account at 127.0.0.1:`port`.
std::string ConnectionTo(int port);
// The same for Azurite's Table service at 127.0.0.1:`port`.
std::string TableConnectionTo(int port);
// A name no earlier call in this process gave: every round starts on fresh
// blobs.
std::string FreshName(const char* stem);

// Queries every page of partition "p" of `table`; Internal unless it holds
// `rows` rows (W4 and bench/listing_share).
blobtable::Status QueryAll(const blobtable::Table& table, int64_t rows);

// Puts the counting wrapper under a store opened with `options` (below any
// cache: it counts what reaches storage); the wrapper is there once the
// store is open.
using RequestCounter = std::shared_ptr<std::shared_ptr<blobtable::internal::CountingBlobStore>>;
RequestCounter CountRequests(blobtable::StoreOptions& options);

// Rows with workload "W2-<ms>ms", threads = concurrency.
blobtable::Result<std::vector<Row>> RunW2(const W2Options& options);

}  // namespace bench

#endif  // BLOBTABLE_BENCH_W2_REMOTE_H_
