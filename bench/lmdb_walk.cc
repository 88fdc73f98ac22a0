// SPDX-License-Identifier: Apache-2.0
// The floor under a scan of the embedded store (issue 57, goal 3;
// docs/performance.md#scans-and-counts): a bare LMDB cursor walking the
// records of a store's container in key order, as a one-shot process (the
// map opened, every value's bytes read), with nothing of blobtable's on top
// but, with `crc`, the one checksum a record's bytes must pass before a
// reader may trust them (CRC-32 over key and value, ISA-L's, as blobtable's
// own). What blobtable spends above this line is its own; what this line
// itself costs against sqlite3 bounds what a store of this file can reach.
//
//   build/bench/lmdb_walk STORE_DIR [touch|crc]   (default touch)
//   prints: records, value bytes, checksum of what was read
#include <isa-l/crc.h>
#include <lmdb.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

int Fail(const char* what, int rc) {
  std::fprintf(stderr, "lmdb_walk: %s: %s\n", what, mdb_strerror(rc));
  return 1;
}

// Reads every byte of `v` (a word at a time): what any reader of the value does.
uint64_t Touch(const MDB_val& v) {
  uint64_t sum = 0, word = 0;
  const auto* p = static_cast<const unsigned char*>(v.mv_data);
  size_t i = 0;
  for (; i + 8 <= v.mv_size; i += 8) {
    std::memcpy(&word, p + i, 8);
    sum += word;
  }
  for (; i < v.mv_size; ++i) sum += p[i];
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: lmdb_walk STORE_DIR [touch|crc]\n");
    return 2;
  }
  const bool crc = argc == 3 && std::strcmp(argv[2], "crc") == 0;
  MDB_env* env = nullptr;
  int rc = mdb_env_create(&env);
  if (rc == 0) rc = mdb_env_set_maxdbs(env, 64);
  if (rc == 0) rc = mdb_env_open(env, argv[1], MDB_RDONLY, 0644);
  if (rc != 0) return Fail("open", rc);
  MDB_txn* txn = nullptr;
  MDB_dbi dbi;
  if ((rc = mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn)) != 0) return Fail("begin", rc);
  if ((rc = mdb_dbi_open(txn, "container:blobtable", 0, &dbi)) != 0)
    return Fail("the container's database", rc);
  MDB_cursor* cursor = nullptr;
  if ((rc = mdb_cursor_open(txn, dbi, &cursor)) != 0) return Fail("cursor", rc);
  MDB_val k, v;
  uint64_t records = 0, bytes = 0, sum = 0;
  for (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    ++records;
    bytes += v.mv_size;
    if (crc) {
      uint32_t c = crc32_gzip_refl(0, static_cast<const unsigned char*>(k.mv_data), k.mv_size);
      sum += crc32_gzip_refl(c, static_cast<const unsigned char*>(v.mv_data), v.mv_size);
    } else {
      sum += Touch(v);
    }
  }
  if (rc != MDB_NOTFOUND) return Fail("walk", rc);
  std::printf("%llu records, %llu value bytes (%llx)\n", static_cast<unsigned long long>(records),
              static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(sum));
  mdb_cursor_close(cursor);
  mdb_txn_abort(txn);
  mdb_env_close(env);
  return 0;
}
