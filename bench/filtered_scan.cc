// SPDX-License-Identifier: Apache-2.0
// Filtered scans on the embedded store (issue 32, goal 3: <= 2 us a row):
// a table of ROWS entities in 100 partitions (an Int64, a String, a
// 300-byte String), scanned whole with a $filter that one row in a hundred
// matches, against a raw LMDB cursor over as many values of about the same
// size. ROUNDS rounds each (3; more to profile the scan over the load);
// microseconds a row scanned.
//
//   cmake --build build --target filtered_scan
//   build/bench/filtered_scan DIR [ROWS, default 100000 [ROUNDS]]   (DIR is emptied)
#include <lmdb.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "blobtable/store.h"
#include "blobtable/txn.h"

namespace {

using Steady = std::chrono::steady_clock;

double MicrosPerRow(Steady::time_point t0, int rows) {
  return std::chrono::duration<double, std::micro>(Steady::now() - t0).count() / rows;
}

// Room for ROWS rows of about 2 KB, at least 256 MiB.
uint64_t MapSize(int rows) { return std::max(uint64_t{256} << 20, uint64_t(rows) * 2048); }

int Fail(const blobtable::Status& s) {
  std::fprintf(stderr, "filtered_scan: %s\n", s.ToString().c_str());
  return 1;
}

int Blobtable(const std::string& dir, int rows, int rounds) {
  blobtable::StoreOptions options;
  options.local.map_size = MapSize(rows);  // not 64 GiB: valgrind cannot map that
  auto store = blobtable::Store::Open(dir + "/blobtable", options);
  if (!store.ok()) return Fail(store.status());
  auto table = (*store)->OpenTable("scan");
  if (!table.ok()) return Fail(table.status());
  const std::string pad(300, 'x');
  for (int i = 0; i < rows;) {
    auto txn = (*store)->Begin();
    if (!txn.ok()) return Fail(txn.status());
    for (int j = 0; j < 1000 && i < rows; ++j, ++i) {
      blobtable::Entity e("p" + std::to_string(i % 100), "r" + std::to_string(i));
      e.Set("n", int64_t{i});
      e.Set("city", std::string(i % 100 == 7 ? "Oslo" : "Lima"));
      e.Set("pad", pad);
      if (blobtable::Status s = txn->Insert(*table, e); !s.ok()) return Fail(s);
    }
    if (auto c = txn->Commit(); !c.ok()) return Fail(c.status());
  }
  for (int round = 0; round < rounds; ++round) {
    blobtable::QueryOptions q;
    q.filter = "city eq 'Oslo' and n ge 0L";
    const auto t0 = Steady::now();
    size_t matched = 0;
    auto scan = table->Scan(q);
    for (const blobtable::Entity& e : scan) matched += e.Find("n") != nullptr;
    const double us = MicrosPerRow(t0, rows);
    if (!scan.status().ok()) return Fail(scan.status());
    std::printf("blobtable filtered scan: %d rows, %zu matched, %.2f us a row\n", rows, matched,
                us);
  }
  return 0;
}

int RawLmdb(const std::string& dir, int rows, int rounds) {
  const std::string path = dir + "/raw";
  std::filesystem::create_directories(path);
  MDB_env* env = nullptr;
  MDB_txn* w = nullptr;
  MDB_dbi dbi;
  if (mdb_env_create(&env) || mdb_env_set_mapsize(env, MapSize(rows)) ||
      mdb_env_open(env, path.c_str(), MDB_NOSYNC, 0644) || mdb_txn_begin(env, nullptr, 0, &w) ||
      mdb_dbi_open(w, nullptr, 0, &dbi))
    return 1;
  std::string value(360, 'v');  // about a stored entity's record
  for (int i = 0; i < rows; ++i) {
    char key[32];
    const int n = std::snprintf(key, sizeof key, "p%02d/r%08d", i % 100, i);
    MDB_val k{static_cast<size_t>(n), key}, v{value.size(), value.data()};
    if (mdb_put(w, dbi, &k, &v, 0)) return 1;
  }
  if (mdb_txn_commit(w)) return 1;
  for (int round = 0; round < rounds; ++round) {
    const auto t0 = Steady::now();
    MDB_txn* r = nullptr;
    MDB_cursor* c = nullptr;
    if (mdb_txn_begin(env, nullptr, MDB_RDONLY, &r) || mdb_cursor_open(r, dbi, &c)) return 1;
    MDB_val k, v;
    size_t touched = 0;
    while (mdb_cursor_get(c, &k, &v, MDB_NEXT) == 0)
      touched += static_cast<const char*>(v.mv_data)[7] == 'v';
    mdb_cursor_close(c);
    mdb_txn_abort(r);
    std::printf("raw LMDB cursor: %zu rows, %.3f us a row\n", touched, MicrosPerRow(t0, rows));
  }
  mdb_env_close(env);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: filtered_scan DIR [ROWS [ROUNDS]]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int rows = argc > 2 ? std::atoi(argv[2]) : 100'000;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  std::filesystem::remove_all(dir);
  if (int rc = Blobtable(dir, rows, rounds); rc != 0) return rc;
  return RawLmdb(dir, rows, rounds);
}
