// SPDX-License-Identifier: Apache-2.0
// RocksDB as a W1 system: Debian's librocksdb, default options, the WAL
// synced on every write or not at all.
#include <rocksdb/db.h>

#include "bench/kv_peer.h"

namespace bench {
namespace {

using blobtable::Status;

class RocksDbPeer final : public KvPeer {
 public:
  explicit RocksDbPeer(bool sync) { write_.sync = sync; }
  Status Open(const std::string& dir, int) override {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(o, dir + "/rocksdb", &db);
    if (!s.ok()) return Status::IOError("rocksdb: " + s.ToString());
    db_.reset(db);
    return Status::OK();
  }
  Status Insert(int, const std::string& key, const std::string& value) override {
    return Check(db_->Put(write_, key, value));
  }
  Status Get(int, const std::string& key, ValueUse use) override {
    std::string value;
    Status got = Check(db_->Get(rocksdb::ReadOptions(), key, &value));
    if (got.ok() && use == ValueUse::kReadAll && SumOfBytes(value) == 0)
      return Status::Internal("no value");
    return got;
  }
  Status Replace(int, const std::string& key, const std::string& value) override {
    return Check(db_->Put(write_, key, value));
  }
  Status Range(int, const std::string& from, int n) override {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    int rows = 0;
    for (it->Seek(from); it->Valid() && rows < n; it->Next()) {
      (void)it->value();
      ++rows;
    }
    if (!it->status().ok()) return Check(it->status());
    return rows == n ? Status::OK() : Status::Internal("short range");
  }

 private:
  static Status Check(const rocksdb::Status& s) {
    return s.ok() ? Status::OK() : Status::IOError("rocksdb: " + s.ToString());
  }
  rocksdb::WriteOptions write_;
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace

std::unique_ptr<KvPeer> NewRocksDbPeer(bool sync) { return std::make_unique<RocksDbPeer>(sync); }

}  // namespace bench
