// SPDX-License-Identifier: Apache-2.0
// W6: secondary indexes (docs/indexes.md#what-it-costs) on the embedded
// store and on Azure through each proxy: an upsert moving both values of a
// table with a unique and a plain index against the same upsert on a table
// with none; an equality query through an index (read, and answered from
// the index alone) against a $filter scan finding the same entities; the
// backfill rate (docs/performance.md#the-benchmark-suite).
#ifndef BLOBTABLE_BENCH_W6_INDEXES_H_
#define BLOBTABLE_BENCH_W6_INDEXES_H_

#include <cstdint>
#include <vector>

#include "bench/harness.h"
#include "blobtable/store.h"
#include "bench/w2_remote.h"

namespace bench {

struct W6Options {
  int rounds = 3;
  int64_t writes = 300;        // upserts a round on the embedded store
  int64_t remote_writes = 30;  // ... on Azure
  int64_t rows = 10000;        // entities of the queried table, embedded
  int64_t remote_rows = 300;   // ... on Azure (its backfill is 50 a second)
  std::vector<W2Endpoint> endpoints;
};

// Rows with workload "W6-embedded" or "W6-<ms>ms": op "upsert" (systems
// plain, the reference, and indexed; requests counted, the finishing sent
// by the round's end included), op "query<rows>" (filter-scan, the
// reference, index, index-covered; three equalities an operation, each
// answering one entity in a thousand), op "backfill" (system index: entities
// a second, one build; the definitions' 10 s grace cut to 1 s and not counted).
blobtable::Result<std::vector<Row>> RunW6(const W6Options& options);

// Row i of the indexed tables at `version`: one of 1,000 cities (held by
// one row in a thousand), a unique email, 200 bytes besides. Each version
// moves both values.
blobtable::Entity IndexedPerson(int64_t i, int version);
// Writes rows 0..n-1 at version 0 in transactions of 100 (one LMDB batch
// each on the embedded store).
blobtable::Status LoadPeople(blobtable::Store& store, const blobtable::Table& table, int64_t n);

}  // namespace bench

#endif  // BLOBTABLE_BENCH_W6_INDEXES_H_
