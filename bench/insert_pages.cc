// SPDX-License-Identifier: Apache-2.0
// What a durable insert writes (issue 32, goal 5: no more pages than raw
// LMDB's put of the same bytes, plus one): the bytes each commit hands the
// kernel (wchar in /proc/self/io; LMDB writes every dirty page and the meta
// page at commit), for Table::Insert of entities with a Binary property of
// each size, against raw LMDB putting, one commit each, a value the size of
// the stored record (the bucket value blobtable keeps, read back from its
// file) under the same keys. Counts, not times: the figures do not depend on
// the machine's speed.
//
//   cmake --build build --target insert_pages
//   build/bench/insert_pages [inserts per size, default 4000]
#include <lmdb.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "bench/harness.h"  // Scratch, RowKey
#include "blobtable/store.h"

namespace {

long long BytesWritten() {
  std::ifstream io("/proc/self/io");
  std::string key;
  long long value = 0;
  while (io >> key >> value)
    if (key == "wchar:") return value;
  return -1;
}

constexpr int kWarmUp = 200;  // inserts before counting: the tree's first levels

struct Run {
  double bytes_a_commit = 0;
  size_t record_bytes = 0;         // blobtable: the stored record of the last entity
  std::vector<std::string> blobs;  // blobtable: the entities' blob names, in order
};

// Table::Insert of `n` entities (after kWarmUp), kFull durability.
Run Blobtable(int n, size_t value_size, std::string* error) {
  const bench::Scratch scratch;
  const std::string& dir = scratch.path();
  Run run;
  std::string last_blob;
  {
    auto store = blobtable::Store::Open(dir, {});
    if (!store.ok()) return *error = store.status().ToString(), run;
    auto table = (*store)->OpenTable("bench");
    if (!table.ok()) return *error = table.status().ToString(), run;
    const blobtable::Binary value{std::string(value_size, 'v')};
    long long before = 0;
    for (int i = 0; i < kWarmUp + n; ++i) {
      if (i == kWarmUp) before = BytesWritten();
      auto put = table->Insert(blobtable::Entity("p", bench::RowKey(i)).Set("v", value));
      if (!put.ok()) return *error = put.status().ToString(), run;
    }
    run.bytes_a_commit = static_cast<double>(BytesWritten() - before) / n;
    for (int i = 0; i < kWarmUp + n; ++i)
      run.blobs.push_back(*table->EntityBlobName("p", bench::RowKey(i)));
    last_blob = run.blobs.back();
  }
  // The record's size, read from the file as raw LMDB sees it.
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  MDB_val k{last_blob.size(), last_blob.data()}, v{};
  if (mdb_env_create(&env) == 0 && mdb_env_set_maxdbs(env, 16) == 0 &&
      mdb_env_set_mapsize(env, size_t{1} << 30) == 0 &&
      mdb_env_open(env, dir.c_str(), MDB_RDONLY, 0644) == 0 &&
      mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn) == 0 &&
      mdb_dbi_open(txn, "container:blobtable", 0, &dbi) == 0 && mdb_get(txn, dbi, &k, &v) == 0)
    run.record_bytes = v.mv_size;
  if (txn != nullptr) mdb_txn_abort(txn);
  if (env != nullptr) mdb_env_close(env);
  if (run.record_bytes == 0) *error = "could not read the stored record back";
  return run;
}

// Raw LMDB: `n` puts (after kWarmUp) of `value_size` bytes, a commit each,
// under `keys` (blobtable's blob names of the same entities).
Run RawLmdb(int n, size_t value_size, const std::vector<std::string>& keys, std::string* error) {
  const bench::Scratch scratch;
  const std::string& dir = scratch.path();
  Run run;
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  if (mdb_env_create(&env) != 0 || mdb_env_set_mapsize(env, size_t{1} << 30) != 0 ||
      mdb_env_open(env, dir.c_str(), 0, 0644) != 0 || mdb_txn_begin(env, nullptr, 0, &txn) != 0 ||
      mdb_dbi_open(txn, nullptr, 0, &dbi) != 0 || mdb_txn_commit(txn) != 0)
    return *error = "raw LMDB: open failed", run;
  std::string value(value_size, 'v');
  long long before = 0;
  for (int i = 0; i < kWarmUp + n && error->empty(); ++i) {
    if (i == kWarmUp) before = BytesWritten();
    const std::string& key = keys[static_cast<size_t>(i)];
    MDB_val k{key.size(), const_cast<char*>(key.data())}, v{value.size(), value.data()};
    if (mdb_txn_begin(env, nullptr, 0, &txn) != 0 || mdb_put(txn, dbi, &k, &v, 0) != 0 ||
        mdb_txn_commit(txn) != 0)
      *error = "raw LMDB: a put failed";
  }
  run.bytes_a_commit = static_cast<double>(BytesWritten() - before) / n;
  mdb_env_close(env);
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::max(100, atoi(argv[1])) : 4000;
  printf("%-8s %10s %14s %14s %12s\n", "value", "record", "blobtable", "raw LMDB", "extra pages");
  for (size_t size : {100, 1000, 4000}) {
    std::string error;
    const Run ours = Blobtable(n, size, &error);
    const Run raw = error.empty() ? RawLmdb(n, ours.record_bytes, ours.blobs, &error) : Run{};
    if (!error.empty()) {
      fprintf(stderr, "insert_pages: %s\n", error.c_str());
      return 1;
    }
    printf("%-8zu %10zu %9.0f B/c  %9.0f B/c  %12.2f\n", size, ours.record_bytes,
           ours.bytes_a_commit, raw.bytes_a_commit,
           (ours.bytes_a_commit - raw.bytes_a_commit) / 4096);
  }
  return 0;
}
