#include "kv/lmdb_env.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "kv/random.h"

namespace blobtable {

Status LmdbError(int rc, std::string_view what) {
  std::string msg = std::string(what) + ": " + mdb_strerror(rc);
  if (rc == MDB_MAP_FULL)
    msg += " (the local store reached its map size; open it with a larger "
           "StoreOptions::local_map_size)";
  return Status::IOError(std::move(msg));
}

namespace {

struct Entry {
  pid_t pid;  // valid only in the process that opened it (a forked child opens its own)
  std::weak_ptr<LmdbEnv> env;
  const LmdbEnv* raw;
};

struct Registry {
  std::mutex mu;
  std::condition_variable closed;  // an entry was erased
  std::map<std::string, Entry> envs;  // by canonical directory
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: used during exit
  return *r;
}

}  // namespace

LmdbEnv::LmdbEnv(MDB_env* env, std::string directory)
    : env_(env), directory_(std::move(directory)),
      max_key_size_(static_cast<size_t>(mdb_env_get_maxkeysize(env))), etag_salt_(RandomU64()) {}

LmdbEnv::~LmdbEnv() { mdb_env_close(env_); }

Result<std::shared_ptr<LmdbEnv>> LmdbEnv::Open(const std::string& directory, uint64_t map_size) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) return Status::IOError("cannot create directory " + directory + ": " + ec.message());
  std::string canonical = std::filesystem::canonical(directory, ec).string();
  if (ec) return Status::IOError("cannot resolve directory " + directory + ": " + ec.message());

  Registry& reg = registry();
  std::unique_lock<std::mutex> lock(reg.mu);
  auto it = reg.envs.find(canonical);
  while (it != reg.envs.end() && it->second.pid == getpid()) {
    if (auto env = it->second.env.lock()) return env;
    // The last user let go and its close is pending: LMDB forbids a second
    // environment on the same files in one process, so wait for the close.
    reg.closed.wait(lock);
    it = reg.envs.find(canonical);
  }

  MDB_env* raw = nullptr;
  int rc = mdb_env_create(&raw);
  if (rc != 0) return LmdbError(rc, "mdb_env_create");
  // NOTLS: read transactions are not tied to threads (callers use thread
  // pools). Generous readers for many threads and processes.
  if ((rc = mdb_env_set_maxdbs(raw, 1024)) != 0 || (rc = mdb_env_set_maxreaders(raw, 1024)) != 0 ||
      (rc = mdb_env_set_mapsize(raw, map_size)) != 0 ||
      (rc = mdb_env_open(raw, canonical.c_str(), MDB_NOTLS, 0644)) != 0) {
    mdb_env_close(raw);
    return LmdbError(rc, "opening LMDB environment in " + canonical);
  }
  // Free reader slots left by processes that died (e.g. killed by a test).
  int dead = 0;
  mdb_reader_check(raw, &dead);

  // Closing happens under the registry lock, so Open never sees a closing
  // environment as absent.
  std::shared_ptr<LmdbEnv> env(new LmdbEnv(raw, canonical), [](LmdbEnv* e) {
    Registry& r = registry();
    std::lock_guard<std::mutex> l(r.mu);
    auto found = r.envs.find(e->directory());
    if (found != r.envs.end() && found->second.raw == e) r.envs.erase(found);
    delete e;  // mdb_env_close
    r.closed.notify_all();
  });
  if (it != reg.envs.end()) {
    // Inherited from a parent process: keep it alive forever here, closing an
    // environment opened by another process would release that process's
    // LMDB locks.
    new std::shared_ptr<LmdbEnv>(it->second.env.lock());
  }
  reg.envs[canonical] = Entry{getpid(), env, env.get()};
  return env;
}

Result<MDB_dbi> LmdbEnv::Database(const std::string& name) {
  std::lock_guard<std::mutex> lock(dbi_mu_);
  auto it = dbis_.find(name);
  if (it != dbis_.end()) return it->second;
  auto txn = LmdbTxn::Begin(*this, /*read_only=*/false);
  if (!txn.ok()) return txn.status();
  MDB_dbi dbi;
  int rc = mdb_dbi_open(txn->get(), name.c_str(), MDB_CREATE, &dbi);
  if (rc != 0) return LmdbError(rc, "opening database " + name);
  Status s = txn->Commit();
  if (!s.ok()) return s;
  dbis_[name] = dbi;
  return dbi;
}

Result<LmdbTxn> LmdbTxn::Begin(LmdbEnv& env, bool read_only) {
  MDB_txn* txn = nullptr;
  std::shared_lock<std::shared_mutex> gate(env.txn_gate_);
  int rc = mdb_txn_begin(env.env(), nullptr, read_only ? MDB_RDONLY : 0, &txn);
  if (rc == MDB_MAP_RESIZED) {
    // Another process grew the map: adopt its size, with no transaction of
    // this process open (LMDB remaps the file), then try again.
    gate.unlock();
    {
      std::unique_lock<std::shared_mutex> exclusive(env.txn_gate_);
      rc = mdb_env_set_mapsize(env.env(), 0);
    }
    gate.lock();
    if (rc == 0) rc = mdb_txn_begin(env.env(), nullptr, read_only ? MDB_RDONLY : 0, &txn);
  }
  if (rc != 0) return LmdbError(rc, "beginning LMDB transaction");
  return LmdbTxn(txn, std::move(gate));
}

LmdbTxn::~LmdbTxn() {
  if (txn_ != nullptr) mdb_txn_abort(txn_);
}

Status LmdbTxn::Commit() {
  int rc = mdb_txn_commit(txn_);
  txn_ = nullptr;
  if (rc != 0) return LmdbError(rc, "committing LMDB transaction");
  return Status::OK();
}

}  // namespace blobtable
