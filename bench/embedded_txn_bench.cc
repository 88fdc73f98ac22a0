// SPDX-License-Identifier: Apache-2.0
// Transactions on the embedded store
// (docs/transactions.md#on-the-embedded-store-one-lmdb-write-transaction): a
// plain write against a transaction of the same write committed as one
// LMDB write transaction and through the lease coordinator, and a 2,000-
// entity transaction over 50 partitions each way. Same durability (LMDB's
// default sync) and entity bytes everywhere; compare the rows of one run
// as ratios (this machine is noisy, fsync most of all).
//
//   cmake --build build --target embedded_txn_bench
//   build/bench/embedded_txn_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true   (one line)
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "blobtable/store.h"
#include "testing/hooks.h"

namespace {

using blobtable::Entity;
using blobtable::Store;
using blobtable::StoreOptions;

// A store in a fresh directory under $TMPDIR, removed at the end.
class BenchStore {
 public:
  explicit BenchStore(bool atomic) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "blobtable-bench-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
    StoreOptions o;
    o = blobtable::internal::WithAtomicCommits(o, atomic);
    auto opened = Store::Open(dir_, o);
    if (opened.ok()) store_ = std::move(*opened);
  }
  bool ok() const { return store_ != nullptr; }
  ~BenchStore() {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Store& store() { return *store_; }

 private:
  std::string dir_;
  std::unique_ptr<Store> store_;
};

Entity Row(const std::string& pk, const std::string& rk, int64_t n) {
  Entity e(pk, rk);
  e.Set("n", n).Set("payload", std::string(1000, 'x'));  // about 1 KiB
  return e;
}

void PlainUpsert(benchmark::State& state) {
  BenchStore s(true);
  if (!s.ok()) return state.SkipWithError("cannot open a store");
  auto table = *s.store().OpenTable("bench");
  int64_t n = 0;
  for (auto _ : state)
    if (!table.Upsert(Row("p", "r", ++n)).ok()) state.SkipWithError("upsert failed");
}

// One transaction upserting `entities` rows spread over `partitions`.
void Transaction(benchmark::State& state, bool atomic) {
  const int entities = static_cast<int>(state.range(0));
  const int partitions = static_cast<int>(state.range(1));
  BenchStore s(atomic);
  if (!s.ok()) return state.SkipWithError("cannot open a store");
  auto table = *s.store().OpenTable("bench");
  int64_t n = 0;
  for (auto _ : state) {
    auto txn = s.store().Begin();
    ++n;
    for (int i = 0; i < entities; ++i)
      if (!txn->Upsert(table, Row("p" + std::to_string(i % partitions), "r" + std::to_string(i), n))
               .ok())
        state.SkipWithError("buffering failed");
    if (!txn->Commit().ok()) state.SkipWithError("commit failed");
  }
  state.SetItemsProcessed(state.iterations() * entities);
}

void AtomicTransaction(benchmark::State& state) { Transaction(state, true); }
void CoordinatedTransaction(benchmark::State& state) { Transaction(state, false); }

}  // namespace

BENCHMARK(PlainUpsert)->Unit(benchmark::kMillisecond);
BENCHMARK(AtomicTransaction)->Args({1, 1})->Args({2000, 50})->Unit(benchmark::kMillisecond);
BENCHMARK(CoordinatedTransaction)->Args({1, 1})->Args({2000, 50})->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
