// SPDX-License-Identifier: Apache-2.0
// A process-wide shared LMDB environment per directory, and an RAII
// transaction. Used by the local blob store (and the cache that will follow).
//
// LMDB forbids opening one environment twice in a process, and an environment
// inherited across fork() must not be used; LmdbEnv::Open hands out one
// shared instance per (directory, process).
#ifndef BLOBTABLE_STORAGE_LOCAL_LMDB_ENV_H_
#define BLOBTABLE_STORAGE_LOCAL_LMDB_ENV_H_

#include <lmdb.h>

#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <compare>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/status.h"
#include "storage/local/write_group.h"

namespace blobtable::internal {

// What LmdbError adds to a Corruption: advice for the local store, whose
// files are the data. (The cache replaces it: its files are only copies.)
inline constexpr char kDamagedStoreAdvice[] =
    " (the local store's files are damaged or not LMDB's: restore them from a backup)";

// IOError naming `what` and LMDB's message. MDB_MAP_FULL explains the fix
// and carries storage_code() kLmdbMapFull.
// `hint`, if any, is appended after LMDB's message.
Status LmdbError(int rc, std::string_view what, std::string_view hint = {});
inline constexpr char kLmdbMapFull[] = "MDB_MAP_FULL";

class LmdbEnv {
 public:
  // The identity of a data file, whatever path reaches it.
  struct FileId {
    dev_t dev;
    ino_t ino;
    auto operator<=>(const FileId&) const = default;
  };

  // Opens (creating if needed) the environment in `directory`: one per data
  // file per process, however the path names it (device and inode). `map_size`
  // is the most the data file may grow to; a later Open asking more grows the
  // shared environment to it. Thread-safe; must not be called while this
  // thread has a transaction open.
  // The files are created with `file_mode` (less the umask), the directory,
  // if made here, with the same plus search bits. A user who may not write
  // gets the environment read-only (read_only()).
  // `sync` says what a commit waits for (see Sync). An environment already
  // open in this process keeps the strongest `sync` any Open asked for.
  enum class Sync {
    kFull,     // the data and the meta page synced (LocalDurability::kFull)
    kRelaxed,  // the data synced, the meta page not (MDB_NOMETASYNC)
    kNone,     // nothing synced (MDB_NOSYNC; a cache): a crash of the machine
               // may lose the last commits, never consistency
  };
  static Result<std::shared_ptr<LmdbEnv>> Open(const std::string& directory, uint64_t map_size,
                                               unsigned file_mode = 0644, Sync sync = Sync::kFull);

  // Whether this process has the environment in `directory` (canonical)
  // open, or closing.
  static bool OpenHere(const std::string& directory);

  ~LmdbEnv();
  LmdbEnv(const LmdbEnv&) = delete;
  LmdbEnv& operator=(const LmdbEnv&) = delete;

  MDB_env* env() const { return env_; }
  const std::string& directory() const { return directory_; }
  // Largest key LMDB accepts (511 bytes in Debian's build).
  size_t max_key_size() const { return max_key_size_; }
  // 64 random bits drawn when this environment was opened: a file restored
  // from a copy, or copied, is told apart from its other lineage by it.
  uint64_t etag_salt() const { return etag_salt_; }
  // A number for a version written in write transaction `txn` that no other
  // write of this open of the environment gets, without writing anything
  // (a counter kept in the file costs a page a commit): LMDB's id of the
  // transaction, which grows with every committed write transaction of
  // every process, and the write's place in it. (An aborted transaction's id
  // is used again; the numbers it gave out never reached anyone, and the
  // places count on.) nullopt past 2^20 writes in one transaction or 2^43
  // transactions: the caller counts another way.
  std::optional<uint64_t> VersionNumber(MDB_txn* txn);
  // Opened read-only (this user cannot write): write transactions fail
  // IOError saying so.
  bool read_only() const { return read_only_; }

  // Runs `body` in a write transaction committed with those of this
  // process's concurrent writers (group commit: storage/local/write_group.h).
  Status Write(const WriteGroup::Body& body) { return writes_.Run(body); }

  // Frees the reader slots of processes that died inside a read (they pin
  // old pages, so the file grows); how many. Done on open, and by writers
  // at most once per reader_check_interval.
  int ReclaimStaleReaders();
  void set_reader_check_interval(std::chrono::milliseconds interval) {
    reader_check_interval_ = interval;
  }

  // The handle of named database `name`, created on first use (unless
  // `create` is false: then NotFound if it does not exist, and the file is
  // not written), and counted: each success must be paired with
  // ReleaseDatabase(name) once its user is done with it (LMDB's handles
  // are few: 1,024 a process, so at most 511 containers may be open at
  // once). Thread-safe; must not be called while this thread has a
  // transaction open.
  Result<MDB_dbi> Database(const std::string& name, bool create = true);
  // Closes the handle when its last user releases it; waits for this
  // process's transactions to end first (LMDB requires that none use it).
  void ReleaseDatabase(const std::string& name);

 private:
  friend class LmdbTxn;
  LmdbEnv(MDB_env* env, std::string directory, FileId id, bool read_only);
  Status GrowMapTo(uint64_t map_size);
  Status StrengthenSyncTo(Sync sync);
  void MaybeReclaimStaleReaders();

  // A reset read transaction for LmdbTxn::Begin to renew, or null; and
  // where LmdbTxn puts one back when done (reset, or aborted when enough
  // wait already). Beginning one costs LMDB a calloc clearing the state of
  // every possible database handle (1,024: ~60 KB), a renew none of that.
  // Both kept in shards (see ReaderShard): `shard` is the calling
  // thread's (ThreadShard()), or for a put the one the reader came from.
  MDB_txn* TakeIdleReader(size_t shard);
  void PutIdleReader(size_t shard, MDB_txn* txn);

  MDB_env* env_;
  std::string directory_;
  FileId id_;
  bool read_only_;
  Sync sync_ = Sync::kFull;  // guarded by the registry's lock
  std::chrono::milliseconds reader_check_interval_{1000};
  std::atomic<int64_t> last_reader_check_ns_{0};  // steady_clock
  size_t max_key_size_;
  uint64_t etag_salt_;
  std::mutex version_mu_;
  size_t version_txn_ = 0;      // the transaction VersionNumber last numbered in
  uint64_t version_place_ = 0;  // the next place in it
  std::mutex dbi_mu_;
  struct Handle {
    MDB_dbi dbi;
    int users;
  };
  std::map<std::string, Handle> dbis_;
  WriteGroup writes_;
  // Threads reading at once would each write the same lock words twice a
  // read (the gate, the idle readers' mutex), lines that then bounce between
  // cores: so both come in shards, one a thread (ThreadShard: threads are
  // dealt shards in turn, on their first transaction), each on lines of
  // its own.
  static constexpr size_t kShards = 8;
  static size_t ThreadShard();
  struct alignas(64) ReaderShard {
    // Held shared by every open transaction begun on this shard; all
    // shards exclusively (Gate) while adopting a map size grown by another
    // process, changing flags or closing a handle (LMDB requires no live
    // transaction then).
    std::shared_mutex gate;
    std::mutex idle_mu;
    std::vector<MDB_txn*> idle;  // reset: no snapshot held, a reader slot each
  };
  std::array<ReaderShard, kShards> shards_;
  // Every shard's gate at once, taken in order (a BasicLockable for
  // std::unique_lock).
  class Gate {
   public:
    explicit Gate(LmdbEnv& env) : env_(env) {}
    void lock() {
      for (ReaderShard& s : env_.shards_) s.gate.lock();
    }
    void unlock() {
      for (ReaderShard& s : env_.shards_) s.gate.unlock();
    }

   private:
    LmdbEnv& env_;
  };
  Gate txn_gate_{*this};
};

// One LMDB transaction; aborted on destruction unless committed.
class LmdbTxn {
 public:
  // Begins a read-only or read-write transaction (write transactions are
  // serialized across threads and processes by LMDB).
  static Result<LmdbTxn> Begin(LmdbEnv& env, bool read_only);

  LmdbTxn(LmdbTxn&& other) noexcept
      : env_(other.env_),
        txn_(other.txn_),
        read_only_(other.read_only_),
        shard_(other.shard_),
        gate_(std::move(other.gate_)) {
    other.txn_ = nullptr;
  }
  LmdbTxn& operator=(LmdbTxn&&) = delete;
  ~LmdbTxn();

  MDB_txn* get() const { return txn_; }
  // Commits; the transaction is over either way (get() is null after).
  Status Commit();

 private:
  LmdbTxn(LmdbEnv* env, MDB_txn* txn, bool read_only, size_t shard,
          std::shared_lock<std::shared_mutex> gate)
      : env_(env), txn_(txn), read_only_(read_only), shard_(shard), gate_(std::move(gate)) {}
  LmdbEnv* env_;
  MDB_txn* txn_;
  bool read_only_;
  size_t shard_;                              // whose gate it holds, where its reader goes back
  std::shared_lock<std::shared_mutex> gate_;  // released after the txn ends
};

inline MDB_val ToVal(std::string_view s) { return MDB_val{s.size(), const_cast<char*>(s.data())}; }
inline std::string_view FromVal(const MDB_val& v) {
  return std::string_view(static_cast<const char*>(v.mv_data), v.mv_size);
}

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_LOCAL_LMDB_ENV_H_
