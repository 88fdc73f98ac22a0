// SPDX-License-Identifier: Apache-2.0
// Where an embedded get goes (issue 32, goal 3: get >= 0.5x raw LMDB): the
// same 10,000 entities of 1 KB read three ways in one run, so that the rows
// compare as ratios on a noisy machine:
//   TableGet       Table::Get: naming, the visible-version read, the entity decode;
//   BlobStoreGet   BlobStore::Get of the same blobs: the local backend alone;
//   RawLmdbGet     mdb_get of the same bytes under the same keys, copied out.
// TableGet - BlobStoreGet is what the layers above storage cost; BlobStoreGet -
// RawLmdbGet what the backend's records cost.
//
//   cmake --build build --target embedded_get_bench
//   build/bench/embedded_get_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <lmdb.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/harness.h"  // Scratch, RowKey
#include "blobtable/store.h"

namespace {

constexpr int kEntities = 10'000;
const std::string kValue(1000, 'x');

// The i-th read of a run: every entity, in an order that defeats locality.
int Pick(int64_t i) { return static_cast<int>(static_cast<uint64_t>(i) * 7919u % kEntities); }

// The embedded store and a raw LMDB environment holding the same entities,
// made once for the program and removed at its end.
class Fixture {
 public:
  static Fixture& Get() {
    static Fixture f;
    return f;
  }
  ~Fixture() {
    if (env_ != nullptr) mdb_env_close(env_);
  }
  bool ok() const { return ok_; }
  blobtable::Table& table() { return *table_; }
  blobtable::BlobStore& blobs() { return store_->blob_store(); }
  const std::vector<std::string>& blob_names() const { return blob_names_; }
  const std::vector<std::string>& row_keys() const { return row_keys_; }
  MDB_env* env() const { return env_; }
  MDB_dbi dbi() const { return dbi_; }

 private:
  Fixture() {
    blobtable::StoreOptions o;
    o.local.durability = blobtable::LocalDurability::kRelaxed;
    auto store = blobtable::Store::Open(store_dir_.path(), o);
    if (!store.ok()) return;
    store_ = std::move(*store);
    auto table = store_->OpenTable("bench");
    if (!table.ok()) return;
    table_ = std::make_unique<blobtable::Table>(std::move(*table));
    if (mdb_env_create(&env_) != 0 || mdb_env_set_mapsize(env_, size_t{1} << 30) != 0 ||
        mdb_env_open(env_, lmdb_dir_.path().c_str(), MDB_NOSYNC, 0644) != 0)
      return;
    MDB_txn* txn = nullptr;
    if (mdb_txn_begin(env_, nullptr, 0, &txn) != 0 || mdb_dbi_open(txn, nullptr, 0, &dbi_) != 0)
      return;
    for (int i = 0; i < kEntities; ++i) {
      const std::string& rk = row_keys_.emplace_back(bench::RowKey(i));
      if (!table_->Upsert(blobtable::Entity("p", rk).Set("v", kValue)).ok()) return;
      auto name = table_->EntityBlobName("p", rk);
      if (!name.ok()) return;
      blob_names_.push_back(*name);
      MDB_val k{name->size(), name->data()};
      MDB_val v{kValue.size(), const_cast<char*>(kValue.data())};
      if (mdb_put(txn, dbi_, &k, &v, 0) != 0) return;
    }
    ok_ = mdb_txn_commit(txn) == 0;
  }

  bench::Scratch store_dir_, lmdb_dir_;  // first: removed after what is in them closes
  std::unique_ptr<blobtable::Store> store_;
  std::unique_ptr<blobtable::Table> table_;
  std::vector<std::string> blob_names_;
  std::vector<std::string> row_keys_;  // made once, as blob_names_ are: no read formats a key
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  bool ok_ = false;
};

// Runs `read(i)` (a Status) for the i-th read of every iteration.
template <typename Read>
void Reads(benchmark::State& state, Read read) {
  if (!Fixture::Get().ok()) return state.SkipWithError("setting up the store failed");
  int64_t i = 0;
  for (auto _ : state) {
    const blobtable::Status s = read(Pick(i++));
    if (!s.ok()) return state.SkipWithError(s.ToString().c_str());
  }
}

void TableGet(benchmark::State& state) {
  Fixture& f = Fixture::Get();
  Reads(state, [&](int n) {
    auto e = f.table().Get("p", f.row_keys()[n]);
    benchmark::DoNotOptimize(e);
    return e.status();
  });
}

void BlobStoreGet(benchmark::State& state) {
  Fixture& f = Fixture::Get();
  Reads(state, [&](int n) {
    auto got = f.blobs().Get(f.blob_names()[n], {});
    benchmark::DoNotOptimize(got);
    return got.status();
  });
}

void RawLmdbGet(benchmark::State& state) {
  Fixture& f = Fixture::Get();
  Reads(state, [&](int n) {
    MDB_txn* txn = nullptr;
    mdb_txn_begin(f.env(), nullptr, MDB_RDONLY, &txn);
    const std::string& name = f.blob_names()[n];
    MDB_val k{name.size(), const_cast<char*>(name.data())}, v;
    const int rc = mdb_get(txn, f.dbi(), &k, &v);
    std::string copy = rc == 0 ? std::string(static_cast<const char*>(v.mv_data), v.mv_size) : "";
    mdb_txn_abort(txn);
    benchmark::DoNotOptimize(copy);
    return rc == 0 ? blobtable::Status::OK() : blobtable::Status::Internal("mdb_get failed");
  });
}

BENCHMARK(TableGet);
BENCHMARK(BlobStoreGet);
BENCHMARK(RawLmdbGet);

}  // namespace

BENCHMARK_MAIN();
