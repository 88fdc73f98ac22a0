// SPDX-License-Identifier: Apache-2.0
// SQLite as a W1 system: WAL, synchronous FULL or NORMAL, a connection and
// prepared statements per thread, autocommit (one transaction per write).
#include <sqlite3.h>

#include <map>
#include <vector>

#include "bench/kv_peer.h"

namespace bench {
namespace {

using blobtable::Status;

class SqlitePeer final : public KvPeer {
 public:
  explicit SqlitePeer(std::string synchronous) : synchronous_(std::move(synchronous)) {}
  ~SqlitePeer() override {
    for (Conn& c : conns_) {
      for (sqlite3_stmt* s : {c.insert, c.get, c.replace, c.range}) sqlite3_finalize(s);
      sqlite3_close(c.db);
    }
  }
  Status Open(const std::string& dir, int threads) override {
    conns_.resize(static_cast<size_t>(threads));
    for (size_t t = 0; t < conns_.size(); ++t) {
      Conn& c = conns_[t];
      if (sqlite3_open((dir + "/bench.sqlite").c_str(), &c.db) != SQLITE_OK) return Fail(c.db);
      sqlite3_busy_timeout(c.db, 60'000);
      const std::string setup = "PRAGMA journal_mode=WAL; PRAGMA synchronous=" + synchronous_ +
                                ";" +
                                (t == 0 ? "CREATE TABLE IF NOT EXISTS t(k TEXT PRIMARY KEY,"
                                          " v BLOB, ver INTEGER) WITHOUT ROWID;"
                                        : "");
      if (sqlite3_exec(c.db, setup.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
        return Fail(c.db);
      if (!Prepare(c, "INSERT INTO t VALUES(?1, ?2, 1)", &c.insert) ||
          !Prepare(c, "SELECT v FROM t WHERE k = ?1", &c.get) ||
          !Prepare(c, "UPDATE t SET v = ?2, ver = ver + 1 WHERE k = ?1 AND ver = ?3", &c.replace) ||
          !Prepare(c, "SELECT k, v FROM t WHERE k >= ?1 ORDER BY k LIMIT ?2", &c.range))
        return Fail(c.db);
      c.versions.clear();
    }
    return Status::OK();
  }
  Status Insert(int thread, const std::string& key, const std::string& value) override {
    Conn& c = conns_[thread];
    Bind(c.insert, key, &value);
    return Done(c, c.insert);
  }
  Status Get(int thread, const std::string& key, ValueUse use) override {
    Conn& c = conns_[thread];
    Bind(c.get, key, nullptr);
    int rc = sqlite3_step(c.get);
    bool empty = false;
    if (rc == SQLITE_ROW) {
      const void* blob = sqlite3_column_blob(c.get, 0);
      const auto size = static_cast<size_t>(sqlite3_column_bytes(c.get, 0));
      empty = use == ValueUse::kReadAll && SumOfBytes({static_cast<const char*>(blob), size}) == 0;
    }
    sqlite3_reset(c.get);
    if (empty) return Status::Internal("no value");
    return rc == SQLITE_ROW ? Status::OK() : Fail(c.db);
  }
  Status Replace(int thread, const std::string& key, const std::string& value) override {
    Conn& c = conns_[thread];
    int64_t& ver = c.versions[key];
    if (ver == 0) ver = 1;
    Bind(c.replace, key, &value);
    sqlite3_bind_int64(c.replace, 3, ver);
    Status s = Done(c, c.replace);
    if (!s.ok()) return s;
    if (sqlite3_changes(c.db) != 1) return Status::Conflict("version moved");
    ++ver;
    return Status::OK();
  }
  Status Range(int thread, const std::string& from, int n) override {
    Conn& c = conns_[thread];
    Bind(c.range, from, nullptr);
    sqlite3_bind_int(c.range, 2, n);
    int rows = 0, rc;
    while ((rc = sqlite3_step(c.range)) == SQLITE_ROW) {
      (void)sqlite3_column_blob(c.range, 1);
      ++rows;
    }
    sqlite3_reset(c.range);
    if (rc != SQLITE_DONE) return Fail(c.db);
    return rows == n ? Status::OK() : Status::Internal("short range");
  }

 private:
  struct Conn {
    sqlite3* db = nullptr;
    sqlite3_stmt *insert = nullptr, *get = nullptr, *replace = nullptr, *range = nullptr;
    std::map<std::string, int64_t> versions;
  };
  static Status Fail(sqlite3* db) {
    return Status::IOError(std::string("sqlite: ") + (db ? sqlite3_errmsg(db) : "open failed"));
  }
  static bool Prepare(Conn& c, const char* sql, sqlite3_stmt** out) {
    return sqlite3_prepare_v2(c.db, sql, -1, out, nullptr) == SQLITE_OK;
  }
  static void Bind(sqlite3_stmt* s, const std::string& key, const std::string* value) {
    sqlite3_bind_text(s, 1, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
    if (value != nullptr)
      sqlite3_bind_blob(s, 2, value->data(), static_cast<int>(value->size()), SQLITE_TRANSIENT);
  }
  static Status Done(Conn& c, sqlite3_stmt* s) {
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? Status::OK() : Fail(c.db);
  }
  const std::string synchronous_;
  std::vector<Conn> conns_;
};

}  // namespace

std::unique_ptr<KvPeer> NewSqlitePeer(const std::string& synchronous) {
  return std::make_unique<SqlitePeer>(synchronous);
}

}  // namespace bench
