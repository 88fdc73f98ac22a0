// SPDX-License-Identifier: Apache-2.0
// Raw LMDB as a W1 system (the floor): one environment with LMDB's default
// durability (synced at every commit), a write transaction per write, a
// read transaction per read, the same key and value bytes.
#include <lmdb.h>

#include "bench/kv_peer.h"

namespace bench {
namespace {

using blobtable::Status;

class LmdbPeer final : public KvPeer {
 public:
  ~LmdbPeer() override {
    if (env_ != nullptr) mdb_env_close(env_);
  }
  Status Open(const std::string& dir, int threads) override {
    int rc = mdb_env_create(&env_);
    if (rc == 0) rc = mdb_env_set_mapsize(env_, size_t{8} << 30);
    if (rc == 0) rc = mdb_env_set_maxreaders(env_, static_cast<unsigned>(threads + 8));
    if (rc == 0) rc = mdb_env_open(env_, dir.c_str(), 0, 0644);
    MDB_txn* txn = nullptr;
    if (rc == 0) rc = mdb_txn_begin(env_, nullptr, 0, &txn);
    if (rc == 0) rc = mdb_dbi_open(txn, nullptr, 0, &dbi_);
    if (rc == 0) rc = mdb_txn_commit(txn);
    return Check(rc);
  }
  Status Insert(int, const std::string& key, const std::string& value) override {
    return Put(key, value, MDB_NOOVERWRITE);
  }
  Status Get(int, const std::string& key, ValueUse use) override {
    MDB_txn* txn = nullptr;
    int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn);
    if (rc != 0) return Check(rc);
    MDB_val k{key.size(), const_cast<char*>(key.data())}, v{};
    rc = mdb_get(txn, dbi_, &k, &v);
    const bool empty = rc == 0 && use == ValueUse::kReadAll &&
                       SumOfBytes({static_cast<const char*>(v.mv_data), v.mv_size}) == 0;
    mdb_txn_abort(txn);
    return empty ? Status::Internal("no value") : Check(rc);
  }
  Status Replace(int, const std::string& key, const std::string& value) override {
    return Put(key, value, 0);
  }
  Status Range(int, const std::string& from, int n) override {
    MDB_txn* txn = nullptr;
    int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn);
    if (rc != 0) return Check(rc);
    MDB_cursor* cur = nullptr;
    rc = mdb_cursor_open(txn, dbi_, &cur);
    MDB_val k{from.size(), const_cast<char*>(from.data())}, v{};
    int rows = 0;
    for (MDB_cursor_op op = MDB_SET_RANGE; rc == 0 && rows < n; op = MDB_NEXT) {
      rc = mdb_cursor_get(cur, &k, &v, op);
      if (rc == 0) ++rows;
    }
    if (cur != nullptr) mdb_cursor_close(cur);
    mdb_txn_abort(txn);
    return rows == n ? Status::OK() : Status::Internal("short range");
  }

 private:
  Status Put(const std::string& key, const std::string& value, unsigned flags) {
    MDB_txn* txn = nullptr;
    int rc = mdb_txn_begin(env_, nullptr, 0, &txn);
    if (rc != 0) return Check(rc);
    MDB_val k{key.size(), const_cast<char*>(key.data())};
    MDB_val v{value.size(), const_cast<char*>(value.data())};
    rc = mdb_put(txn, dbi_, &k, &v, flags);
    if (rc != 0) {
      mdb_txn_abort(txn);
      return Check(rc);
    }
    return Check(mdb_txn_commit(txn));
  }
  static Status Check(int rc) {
    return rc == 0 ? Status::OK() : Status::IOError(std::string("lmdb: ") + mdb_strerror(rc));
  }
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
};

}  // namespace

std::unique_ptr<KvPeer> NewLmdbPeer() { return std::make_unique<LmdbPeer>(); }

}  // namespace bench
