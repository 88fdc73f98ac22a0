// SPDX-License-Identifier: Apache-2.0
// Where an embedded store's bytes go (issue 57, docs/performance.md#where-the-bytes-go):
// for the blobs' records (database container:blobtable) the bytes of the
// LMDB keys, of the values (records: head and inline data), LMDB's node
// overhead (8-byte header and 2-byte pointer a record), the leaf, branch and
// overflow pages and what of the leaves is left empty; the data database;
// the free pages and the file. Read-only, with LMDB's own API.
//
//   build/bench/space_breakdown STORE_DIR [BODY_BYTES]
// BODY_BYTES (the entities' bytes, `blobtable stats` .tables[].bytes) splits
// the values into record heads and bodies.
#include <lmdb.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

void Die(const char* what, int rc) {
  std::fprintf(stderr, "space_breakdown: %s: %s\n", what, mdb_strerror(rc));
  std::exit(1);
}

struct Walked {
  MDB_stat stat{};
  size_t entries = 0, key_bytes = 0, value_bytes = 0;
};

Walked Walk(MDB_txn* txn, const char* name) {
  Walked w;
  MDB_dbi dbi;
  int rc = mdb_dbi_open(txn, name, 0, &dbi);
  if (rc == MDB_NOTFOUND) return w;
  if (rc != 0) Die(name, rc);
  if ((rc = mdb_stat(txn, dbi, &w.stat)) != 0) Die(name, rc);
  MDB_cursor* cursor;
  if ((rc = mdb_cursor_open(txn, dbi, &cursor)) != 0) Die(name, rc);
  MDB_val k, v;
  while (mdb_cursor_get(cursor, &k, &v, MDB_NEXT) == 0) {
    ++w.entries;
    w.key_bytes += k.mv_size;
    w.value_bytes += v.mv_size;
  }
  mdb_cursor_close(cursor);
  return w;
}

double Mb(double bytes) { return bytes / 1e6; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: space_breakdown STORE_DIR [BODY_BYTES]\n");
    return 2;
  }
  const double bodies = argc > 2 ? std::atof(argv[2]) : 0;
  MDB_env* env;
  int rc = mdb_env_create(&env);
  if (rc == 0) rc = mdb_env_set_maxdbs(env, 1024);
  if (rc == 0) rc = mdb_env_set_mapsize(env, size_t{1} << 36);
  if (rc == 0) rc = mdb_env_open(env, argv[1], MDB_RDONLY, 0);
  if (rc != 0) Die(argv[1], rc);
  MDB_txn* txn;
  if ((rc = mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn)) != 0) Die("begin", rc);
  MDB_envinfo info;
  mdb_env_info(env, &info);
  const Walked rec = Walk(txn, "container:blobtable"), data = Walk(txn, "data:blobtable");
  const double page = rec.stat.ms_psize > 0 ? rec.stat.ms_psize : 4096;
  const double node = 10.0 * rec.entries;
  const double leaf_bytes = rec.stat.ms_leaf_pages * page;
  const double slack =
      leaf_bytes - rec.key_bytes - rec.value_bytes - node - 16.0 * rec.stat.ms_leaf_pages;
  const double used_pages = info.me_last_pgno + 1;
  std::printf("records %zu\n", rec.entries);
  std::printf("keys                %8.2f MB  %6.1f bytes a record\n", Mb(rec.key_bytes),
              rec.key_bytes / double(rec.entries));
  if (bodies > 0) {
    std::printf("record heads        %8.2f MB  %6.1f\n", Mb(rec.value_bytes - bodies),
                (rec.value_bytes - bodies) / rec.entries);
    std::printf("entity bodies       %8.2f MB  %6.1f\n", Mb(bodies), bodies / rec.entries);
  } else {
    std::printf("records' values     %8.2f MB  %6.1f\n", Mb(rec.value_bytes),
                rec.value_bytes / double(rec.entries));
  }
  std::printf("LMDB node overhead  %8.2f MB  %6.1f\n", Mb(node), 10.0);
  std::printf("leaf pages          %8zu (%.2f MB), filled %.0f %%\n", rec.stat.ms_leaf_pages,
              Mb(leaf_bytes), 100.0 * (1 - slack / leaf_bytes));
  std::printf("  left empty        %8.2f MB\n", Mb(slack));
  std::printf("branch pages        %8zu (%.2f MB)\n", rec.stat.ms_branch_pages,
              Mb(rec.stat.ms_branch_pages * page));
  std::printf("overflow pages      %8zu (%.2f MB)\n", rec.stat.ms_overflow_pages,
              Mb(rec.stat.ms_overflow_pages * page));
  std::printf(
      "data database       %8.2f MB in %zu pages\n",
      Mb((data.stat.ms_leaf_pages + data.stat.ms_branch_pages + data.stat.ms_overflow_pages) *
         page),
      size_t(data.stat.ms_leaf_pages + data.stat.ms_branch_pages + data.stat.ms_overflow_pages));
  const double tree_pages = rec.stat.ms_leaf_pages + rec.stat.ms_branch_pages +
                            rec.stat.ms_overflow_pages + data.stat.ms_leaf_pages +
                            data.stat.ms_branch_pages + data.stat.ms_overflow_pages;
  std::printf(
      "free and other pages %7.0f (%.2f MB: LMDB's free list, meta pages, small databases)\n",
      used_pages - tree_pages, Mb((used_pages - tree_pages) * page));
  std::printf("pages in use        %8.0f (%.2f MB, the file's live part)\n", used_pages,
              Mb(used_pages * page));
  mdb_txn_abort(txn);
  mdb_env_close(env);
  return 0;
}
