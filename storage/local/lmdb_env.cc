// SPDX-License-Identifier: Apache-2.0
#include "storage/local/lmdb_env.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "util/macros.h"
#include "util/random.h"
#include "storage/local/lmdb_page_walk.h"
#include "storage/local/store_files.h"

namespace blobtable::internal {

Status LmdbError(int rc, std::string_view what, std::string_view hint) {
  std::string msg = std::string(what) + ": " + mdb_strerror(rc) + std::string(hint);
  if (rc == MDB_INVALID || rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND ||
      rc == MDB_VERSION_MISMATCH)
    return Status::Corruption(msg + kDamagedStoreAdvice);
  if (rc == MDB_MAP_FULL) {
    msg +=
        " (the local store reached its map size; open it with a larger "
        "StoreOptions::local.map_size)";
    return Status::FromStorage(Code::kIOError, 0, kLmdbMapFull, std::move(msg));
  }
  return Status::IOError(std::move(msg));
}

namespace {

struct Entry {
  pid_t pid;  // valid only in the process that opened it (a forked child opens its own)
  std::weak_ptr<LmdbEnv> env;
  const LmdbEnv* raw;
};

// Environments by the identity of their data file, not its path: a bind
// mount, a symlink or a directory of hard links reaches the same file by
// another name, and a second environment on it in one process would drop
// this process's locks on lock.mdb when it closed.
struct Registry {
  std::mutex mu;
  std::condition_variable closed;  // an entry was erased
  std::map<LmdbEnv::FileId, Entry> envs;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: used during exit
  return *r;
}

std::optional<LmdbEnv::FileId> IdOf(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return LmdbEnv::FileId{st.st_dev, st.st_ino};
}

}  // namespace

LmdbEnv::LmdbEnv(MDB_env* env, std::string directory, FileId id, bool read_only)
    : env_(env),
      directory_(std::move(directory)),
      id_(id),
      read_only_(read_only),
      max_key_size_(static_cast<size_t>(mdb_env_get_maxkeysize(env))),
      etag_salt_(RandomU64()),
      writes_(*this) {}

LmdbEnv::~LmdbEnv() {
  for (ReaderShard& shard : shards_)
    for (MDB_txn* idle : shard.idle) mdb_txn_abort(idle);
  mdb_env_close(env_);
}

namespace {
// Enough for every thread of a busy process to find one (64 in all); each
// holds a reader slot (of 1,024) while it waits.
constexpr size_t kMaxIdleReadersAShard = 8;
}  // namespace

size_t LmdbEnv::ThreadShard() {
  static std::atomic<size_t> next{0};
  // Read on every read: initial-exec and constant-initialised (0: not yet
  // dealt), so it is one load from the thread's block, not a call.
  [[gnu::tls_model("initial-exec")]] thread_local size_t shard_plus_one = 0;
  if (shard_plus_one == 0)
    shard_plus_one = next.fetch_add(1, std::memory_order_relaxed) % kShards + 1;
  return shard_plus_one - 1;
}

MDB_txn* LmdbEnv::TakeIdleReader(size_t shard) {
  ReaderShard& s = shards_[shard];
  std::lock_guard<std::mutex> lock(s.idle_mu);
  if (s.idle.empty()) return nullptr;
  MDB_txn* txn = s.idle.back();
  s.idle.pop_back();
  return txn;
}

void LmdbEnv::PutIdleReader(size_t shard, MDB_txn* txn) {
  mdb_txn_reset(txn);
  {
    ReaderShard& s = shards_[shard];
    std::lock_guard<std::mutex> lock(s.idle_mu);
    if (s.idle.size() < kMaxIdleReadersAShard) {
      s.idle.push_back(txn);
      return;
    }
  }
  mdb_txn_abort(txn);
}

// One attempt at opening the environment with `flags`; LMDB's error, or 0
// with *out set.
static int OpenRaw(const std::string& dir, uint64_t map_size, unsigned flags, unsigned file_mode,
                   MDB_env** out) {
  // A page size LMDB would divide by, damaged: refused before it is read.
  if (!CheckLmdbMetaPages(dir + "/data.mdb").empty()) return MDB_CORRUPTED;
  MDB_env* raw = nullptr;
  int rc = mdb_env_create(&raw);
  if (rc != 0) return rc;
  // NOTLS: read transactions are not tied to threads (callers use thread
  // pools). Generous readers for many threads and processes.
  if ((rc = mdb_env_set_maxdbs(raw, 1024)) != 0 || (rc = mdb_env_set_maxreaders(raw, 1024)) != 0 ||
      (rc = mdb_env_set_mapsize(raw, map_size)) != 0 ||
      (rc = mdb_env_open(raw, dir.c_str(), MDB_NOTLS | flags, file_mode)) != 0) {
    mdb_env_close(raw);
    return rc;
  }
  *out = raw;
  return 0;
}

namespace {
unsigned SyncFlags(LmdbEnv::Sync sync) {
  switch (sync) {
    case LmdbEnv::Sync::kFull: return 0;
    case LmdbEnv::Sync::kRelaxed: return MDB_NOMETASYNC;
    case LmdbEnv::Sync::kNone: return MDB_NOSYNC;
  }
  return 0;
}
}  // namespace

Status LmdbEnv::StrengthenSyncTo(Sync sync) {
  if (static_cast<int>(sync) >= static_cast<int>(sync_)) return Status::OK();
  // Flags off first, then the stronger one's on; LMDB allows both on an open
  // environment, but not while a commit reads them. The commits already made
  // keep what they had.
  std::unique_lock<Gate> no_transactions(txn_gate_);
  int rc = mdb_env_set_flags(env_, SyncFlags(sync_), 0);
  if (rc == 0 && SyncFlags(sync) != 0) rc = mdb_env_set_flags(env_, SyncFlags(sync), 1);
  if (rc != 0) return LmdbError(rc, "changing how the local store " + directory_ + " syncs");
  sync_ = sync;
  return Status::OK();
}

bool LmdbEnv::OpenHere(const std::string& directory) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  std::optional<FileId> id = IdOf(directory + "/data.mdb");
  auto it = id ? reg.envs.find(*id) : reg.envs.end();
  return it != reg.envs.end() && it->second.pid == getpid();
}

Result<std::shared_ptr<LmdbEnv>> LmdbEnv::Open(const std::string& directory, uint64_t map_size,
                                               unsigned file_mode, Sync sync) {
  std::error_code ec;
  if (std::filesystem::create_directories(directory, ec) && !ec) {
    // Made here: as private as its files (0644 gives 0755, 0600 gives 0700).
    const auto exec = static_cast<std::filesystem::perms>((file_mode & 0444) >> 2);
    std::filesystem::permissions(directory,
                                 static_cast<std::filesystem::perms>(file_mode & 0777) | exec, ec);
  }
  if (ec) return Status::IOError("cannot create directory " + directory + ": " + ec.message());
  std::string canonical = std::filesystem::canonical(directory, ec).string();
  if (ec) return Status::IOError("cannot resolve directory " + directory + ": " + ec.message());

  Registry& reg = registry();
  std::unique_lock<std::mutex> lock(reg.mu);
  std::optional<FileId> id = IdOf(canonical + "/data.mdb");
  auto it = id ? reg.envs.find(*id) : reg.envs.end();
  while (it != reg.envs.end() && it->second.pid == getpid()) {
    if (auto env = it->second.env.lock()) {
      BT_RETURN_IF_ERROR(env->GrowMapTo(map_size));
      BT_RETURN_IF_ERROR(env->StrengthenSyncTo(sync));
      return env;
    }
    // The last user let go and its close is pending: LMDB forbids a second
    // environment on the same files in one process, so wait for the close.
    reg.closed.wait(lock);
    it = reg.envs.find(*id);
  }

  BT_RETURN_IF_ERROR(CheckBeforeOpen(canonical, file_mode));
  if (std::string damage = CheckLmdbMetaPages(canonical + "/data.mdb"); !damage.empty())
    return Status::Corruption("local store " + canonical + " is damaged (" + damage +
                              "): restore it from a backup");
  // Read-write if this user may write; else read-only (LMDB still keeps a
  // reader slot in lock.mdb if that is writable), else read-only without
  // locks: readers then cannot hold a writer off the pages they read, so a
  // read racing another user's write can fail Corruption (the checksums).
  MDB_env* raw = nullptr;
  int rc = EACCES;
  unsigned mode = 0;
  for (unsigned flags : {0u, unsigned{MDB_RDONLY}, unsigned{MDB_RDONLY | MDB_NOLOCK}}) {
    if (rc != EACCES && rc != EROFS) break;
    mode = flags;
    rc = OpenRaw(canonical, map_size, flags | SyncFlags(sync), file_mode, &raw);
  }
  if (rc != 0) return LmdbError(rc, "opening the local store " + canonical + "/data.mdb");
  const bool read_only = (mode & MDB_RDONLY) != 0;
  Status intact = CheckAfterOpen(raw, canonical, /*mark=*/!read_only, file_mode);
  std::optional<FileId> opened = IdOf(canonical + "/data.mdb");
  if (!intact.ok() || !opened) {
    mdb_env_close(raw);
    if (!intact.ok()) return intact;
    return Status::IOError("opening LMDB environment in " + canonical + ": data.mdb vanished");
  }
  // Closing happens under the registry lock, so Open never sees a closing
  // environment as absent.
  std::shared_ptr<LmdbEnv> env(new LmdbEnv(raw, canonical, *opened, read_only), [](LmdbEnv* e) {
    Registry& r = registry();
    std::lock_guard<std::mutex> l(r.mu);
    auto found = r.envs.find(e->id_);
    if (found != r.envs.end() && found->second.raw == e) r.envs.erase(found);
    delete e;  // mdb_env_close
    r.closed.notify_all();
  });
  env->sync_ = sync;
  env->ReclaimStaleReaders();  // slots of processes that died reading
  auto inherited = reg.envs.find(*opened);
  if (inherited != reg.envs.end()) {
    // Inherited from a parent process: keep it alive forever here, closing an
    // environment opened by another process would release that process's
    // LMDB locks.
    new std::shared_ptr<LmdbEnv>(inherited->second.env.lock());
  }
  reg.envs[*opened] = Entry{getpid(), env, env.get()};
  return env;
}

Status LmdbEnv::GrowMapTo(uint64_t map_size) {
  MDB_envinfo info;
  mdb_env_info(env_, &info);
  if (info.me_mapsize >= map_size) return Status::OK();
  // LMDB allows resizing only with no transaction of this process open.
  std::unique_lock<Gate> exclusive(txn_gate_);
  int rc = mdb_env_set_mapsize(env_, map_size);
  if (rc != 0) return LmdbError(rc, "growing the LMDB map of " + directory_);
  return Status::OK();
}

int LmdbEnv::ReclaimStaleReaders() {
  int dead = 0;
  mdb_reader_check(env_, &dead);
  last_reader_check_ns_.store(std::chrono::steady_clock::now().time_since_epoch().count());
  return dead;
}

void LmdbEnv::MaybeReclaimStaleReaders() {
  const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
  const int64_t last = last_reader_check_ns_.load();
  const int64_t interval =
      std::chrono::duration_cast<std::chrono::nanoseconds>(reader_check_interval_).count();
  if (now - last >= interval) ReclaimStaleReaders();
}

Result<MDB_dbi> LmdbEnv::Database(const std::string& name, bool create) {
  std::lock_guard<std::mutex> lock(dbi_mu_);
  auto it = dbis_.find(name);
  if (it != dbis_.end()) {
    ++it->second.users;
    return it->second.dbi;
  }
  auto txn = LmdbTxn::Begin(*this, /*read_only=*/read_only_);
  if (!txn.ok()) return txn.status();
  MDB_dbi dbi;
  int rc = mdb_dbi_open(txn->get(), name.c_str(), read_only_ || !create ? 0 : MDB_CREATE, &dbi);
  if (rc == MDB_NOTFOUND)
    return Status::NotFound(std::string(read_only_ ? "the read-only " : "the ") + "local store " +
                            directory_ + " has no '" + name + "' (a container never written to)");
  if (rc != 0) return LmdbError(rc, "opening database " + name);
  Status s = txn->Commit();
  if (!s.ok()) return s;
  dbis_[name] = Handle{dbi, 1};
  return dbi;
}

void LmdbEnv::ReleaseDatabase(const std::string& name) {
  std::lock_guard<std::mutex> lock(dbi_mu_);
  auto it = dbis_.find(name);
  if (it == dbis_.end() || --it->second.users > 0) return;
  std::unique_lock<Gate> no_transactions(txn_gate_);
  mdb_dbi_close(env_, it->second.dbi);
  dbis_.erase(it);
}

std::optional<uint64_t> LmdbEnv::VersionNumber(MDB_txn* txn) {
  constexpr int kPlaceBits = 20;
  const size_t id = mdb_txn_id(txn);
  std::lock_guard<std::mutex> lock(version_mu_);
  if (id != version_txn_) {
    version_txn_ = id;
    version_place_ = 0;
  }
  if (version_place_ >= (uint64_t{1} << kPlaceBits) || id >= (size_t{1} << (63 - kPlaceBits)))
    return std::nullopt;
  return (uint64_t{id} << kPlaceBits) | version_place_++;
}

Result<LmdbTxn> LmdbTxn::Begin(LmdbEnv& env, bool read_only) {
  MDB_txn* txn = nullptr;
  if (!read_only && env.read_only())
    return Status::IOError("the local store " + env.directory() +
                           " is open read-only (this user cannot write to its files): "
                           "writes are refused");
  // A reader slot left by a process that died pins the pages it saw: the
  // file grows on every rewrite until the slot is freed. Writers look.
  if (!read_only) env.MaybeReclaimStaleReaders();
  const size_t shard = LmdbEnv::ThreadShard();
  std::shared_lock<std::shared_mutex> gate(env.shards_[shard].gate);
  if (read_only) {
    if (MDB_txn* idle = env.TakeIdleReader(shard)) {
      if (mdb_txn_renew(idle) == 0) return LmdbTxn(&env, idle, true, shard, std::move(gate));
      mdb_txn_abort(idle);  // e.g. the map grew: begin afresh below, which adopts it
    }
  }
  int rc = mdb_txn_begin(env.env(), nullptr, read_only ? MDB_RDONLY : 0, &txn);
  if (rc == MDB_MAP_RESIZED) {
    // Another process grew the map: adopt its size, with no transaction of
    // this process open (LMDB remaps the file), then try again.
    gate.unlock();
    {
      std::unique_lock<LmdbEnv::Gate> exclusive(env.txn_gate_);
      rc = mdb_env_set_mapsize(env.env(), 0);
    }
    gate.lock();
    if (rc == 0) rc = mdb_txn_begin(env.env(), nullptr, read_only ? MDB_RDONLY : 0, &txn);
  }
  if (rc != 0) return LmdbError(rc, "beginning LMDB transaction");
  return LmdbTxn(&env, txn, read_only, shard, std::move(gate));
}

LmdbTxn::~LmdbTxn() {
  if (txn_ == nullptr) return;
  if (read_only_)
    env_->PutIdleReader(shard_, txn_);
  else
    mdb_txn_abort(txn_);
}

Status LmdbTxn::Commit() {
  int rc = mdb_txn_commit(txn_);
  txn_ = nullptr;
  // The transaction is over: let a map resize or a handle's release go on
  // now, not when this object goes (a caller that commits and then releases
  // a handle in the same scope would wait for itself).
  if (gate_.owns_lock()) gate_.unlock();
  // A full disk shows as ENOSPC or, on a short write, as EIO.
  if (rc != 0)
    return LmdbError(rc, "committing LMDB transaction", SpaceHint(env_->directory(), rc));
  return Status::OK();
}

}  // namespace blobtable::internal
