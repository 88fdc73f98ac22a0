// SPDX-License-Identifier: Apache-2.0
#include "storage/local/local_files.h"
#include "util/metric_catalog.h"

#include <fcntl.h>
#include <lmdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "storage/local/dense_copy.h"
#include "storage/local/lmdb_page_walk.h"
#include "storage/local/store_files.h"
#include "testing/sync_point.h"
#include "util/macros.h"

namespace blobtable::internal {
namespace {

namespace fs = std::filesystem;

Status Errno(const std::string& what) {
  return Status::IOError(what + ": " + std::strerror(errno));
}

// fsync of the file at `path`.
Status SyncFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("opening " + path + " to sync it");
  const int rc = fsync(fd);
  const Status s = rc == 0 ? Status::OK() : Errno("syncing " + path);
  close(fd);
  return s;
}

// LMDB's environment on `dir` opened with `flags` (and its own error).
Result<MDB_env*> OpenEnv(const std::string& dir, unsigned flags) {
  MDB_env* env = nullptr;
  if (std::string damage = CheckLmdbMetaPages(dir + "/data.mdb"); !damage.empty())
    return Status::Corruption("local store " + dir + " is damaged (" + damage +
                              "): restore it from a backup");
  int rc = mdb_env_create(&env);
  if (rc == 0) rc = mdb_env_set_maxdbs(env, 1024);
  if (rc == 0) rc = mdb_env_set_maxreaders(env, 1024);
  if (rc == 0) rc = mdb_env_open(env, dir.c_str(), MDB_NOTLS | flags, 0644);
  if (rc != 0) {
    if (env != nullptr) mdb_env_close(env);
    return LmdbError(rc, "opening the local store " + dir);
  }
  return env;
}

// The exclusive lock on byte 0 of LMDB's lock file that every process with
// the environment open holds shared (LMDB's own protocol: a process that
// finds it taken waits to open). Held while the object lives.
class ExclusiveUse {
 public:
  ~ExclusiveUse() {
    if (fd_ >= 0) close(fd_);  // closing releases the lock
  }
  // Busy naming the process that has the store open, if one has.
  Status Take(const std::string& dir) {
    fd_ = open((dir + "/lock.mdb").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return Errno("opening " + dir + "/lock.mdb");
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = 0;
    lock.l_len = 1;
    if (fcntl(fd_, F_SETLK, &lock) == 0) return Status::OK();
    if (errno != EACCES && errno != EAGAIN) return Errno("locking " + dir + "/lock.mdb");
    std::string who = "another process";
    if (fcntl(fd_, F_GETLK, &lock) == 0 && lock.l_type != F_UNLCK)
      who = "process " + std::to_string(lock.l_pid);
    return Status::Busy("the store in " + dir + " is open in " + who +
                        ": compacting needs it closed everywhere (stop what uses it, then run "
                        "compact again)");
  }

 private:
  int fd_ = -1;
};

// `source` rewritten densely (dense_copy.h) into directory `dest`, in one
// read transaction's snapshot, with the source's map size.
Status DenseCopyOf(MDB_env* source, const std::string& dest) {
  MDB_envinfo info;
  int rc = mdb_env_info(source, &info);
  MDB_txn* txn = nullptr;
  if (rc == 0) rc = mdb_txn_begin(source, nullptr, MDB_RDONLY, &txn);
  if (rc != 0) return LmdbError(rc, "reading the store");
  Status s = DenseCopy(txn, dest, info.me_mapsize);
  mdb_txn_abort(txn);
  return s;
}

}  // namespace

Result<FileFigures> FiguresOf(LmdbEnv& env, bool compacted) {
  FileFigures f;
  BT_ASSIGN_OR_RETURN(LmdbTxn txn, LmdbTxn::Begin(env, /*read_only=*/true));
  MDB_envinfo info;
  MDB_stat stat;
  int rc = mdb_env_info(env.env(), &info);
  if (rc == 0) rc = mdb_env_stat(env.env(), &stat);
  if (rc != 0) return LmdbError(rc, "reading the figures of " + env.directory());
  f.page_size = stat.ms_psize;
  f.pages_used = info.me_last_pgno + 1;
  f.map_bytes = info.me_mapsize;
  f.readers = static_cast<int>(info.me_numreaders);
  struct stat st;
  if (::stat((env.directory() + "/data.mdb").c_str(), &st) == 0)
    f.file_bytes = static_cast<uint64_t>(st.st_size);
  rc = ForEachFreeRun(txn.get(),
                      [&](const std::vector<size_t>& pages) { f.free_pages += pages.size(); });
  if (rc != 0) return LmdbError(rc, "reading the free list of " + env.directory());
  if (compacted) {
    BT_ASSIGN_OR_RETURN(f.compacted_bytes, DenseSize(txn.get()));
  }
  return f;
}

void CountLocalFiles(MetricsRegistry& registry, std::shared_ptr<BlobStore> files) {
  registry.AddReaders([files] {
    std::vector<MetricsRegistry::Reading> out;
    auto* local = dynamic_cast<LocalFiles*>(files.get());
    // Not the records' walk (compacted_bytes): a scrape costs the free list's.
    auto f = local != nullptr ? FiguresOf(local->lmdb(), /*compacted=*/false)
                              : Result<FileFigures>(Status::Internal("not local"));
    if (!f.ok()) return out;
    auto bytes = [](uint64_t n) { return static_cast<double>(n); };
    out.push_back({&metric::kLocalFileBytes, {}, bytes(f->file_bytes)});
    out.push_back({&metric::kLocalMapBytes, {}, bytes(f->map_bytes)});
    out.push_back({&metric::kLocalUsedBytes, {}, bytes(f->pages_used * f->page_size)});
    out.push_back({&metric::kLocalFreeBytes, {}, bytes(f->free_pages * f->page_size)});
    out.push_back({&metric::kLocalReaders, {}, static_cast<double>(f->readers)});
    return out;
  });
}

Status HotCopy(LmdbEnv& env, const std::string& dest) {
  // A copy of a damaged file is no backup: its pages are judged first.
  BT_RETURN_IF_ERROR(CheckPages(env));
  std::error_code ec;
  if (fs::exists(dest, ec) && !fs::is_empty(dest, ec))
    return Status::InvalidArgument("backup destination " + dest +
                                   " is not empty: give a new directory or an empty one");
  fs::create_directories(dest, ec);
  if (ec) return Status::IOError("cannot create directory " + dest + ": " + ec.message());
  const int rc = mdb_env_copy2(env.env(), dest.c_str(), 0);
  if (rc != 0) return LmdbError(rc, "copying the local store " + env.directory() + " to " + dest);
  BT_RETURN_IF_ERROR(SyncFile(dest + "/data.mdb"));
  return SyncDirectory(dest);
}

Result<Compacted> CompactInPlace(const std::string& directory) {
  std::error_code ec;
  const std::string dir = fs::canonical(directory, ec).string();
  if (ec || !fs::exists(dir + "/data.mdb", ec))
    return Status::NotFound("no store at " + directory + " (no data.mdb)");
  if (LmdbEnv::OpenHere(dir))
    return Status::Busy("the store in " + dir + " is open in this process: close it first");
  struct stat lock {};
  const std::string lock_file = dir + "/lock.mdb";
  const bool had_lock_file = ::stat(lock_file.c_str(), &lock) == 0;
  ExclusiveUse exclusive;
  BT_RETURN_IF_ERROR(exclusive.Take(dir));
  Compacted out;
  struct stat before;
  if (::stat((dir + "/data.mdb").c_str(), &before) != 0) return Errno("reading " + dir);
  out.bytes_before = static_cast<uint64_t>(before.st_size);
  if (before.st_size == 0)
    return Status::Corruption("local store " + dir +
                              ": data.mdb is empty: restore it from a backup");

  // The copy, from a read-only environment without LMDB's locks (this
  // process holds the one that matters), into a directory beside the file.
  const std::string temp = dir + "/.compacting";
  fs::remove_all(temp, ec);
  fs::create_directory(temp, ec);
  if (ec) return Status::IOError("cannot create " + temp + ": " + ec.message());
  BT_ASSIGN_OR_RETURN(MDB_env * source, OpenEnv(dir, MDB_RDONLY | MDB_NOLOCK));
  // The copy follows every page through LMDB's map: a page past the end of
  // a file cut short would fault (SIGBUS). The file is judged first, read
  // from the file itself (lmdb_page_walk.h); a damaged one is refused and
  // left as it is.
  MDB_txn* judged = nullptr;
  std::string damage;
  if (mdb_txn_begin(source, nullptr, MDB_RDONLY, &judged) == 0) {
    damage = WalkLmdbPages(dir + "/data.mdb", mdb_txn_id(judged));
    mdb_txn_abort(judged);
  }
  if (!damage.empty()) {
    mdb_env_close(source);
    fs::remove_all(temp, ec);
    return Status::Corruption("local store " + dir + " is damaged (" + damage +
                              "): not compacted; restore it from a backup");
  }
  Status copied = DenseCopyOf(source, temp);
  mdb_env_close(source);
  if (!copied.ok()) {
    fs::remove_all(temp, ec);
    return copied.WithContext("compacting the local store " + dir);
  }
  const std::string copy = temp + "/data.mdb";
  if (chmod(copy.c_str(), before.st_mode & 07777) != 0) return Errno("chmod " + copy);
  // The copy replaces the file: it keeps its owner (root compacting a
  // service's store left it the root's, and the service read-only).
  if (chown(copy.c_str(), before.st_uid, before.st_gid) != 0) {
    const Status why =
        Errno("giving " + copy + " the owner of " + dir + "/data.mdb (uid " +
              std::to_string(before.st_uid) + ", gid " + std::to_string(before.st_gid) + ")");
    fs::remove_all(temp, ec);
    return Status::IOError(why.message() + ": run compact as the store's owner");
  }
  BT_RETURN_IF_ERROR(SyncFile(copy));
  BT_SYNC_POINT("compact.copied");
  // The rename is the switch: a crash before it leaves the store as it
  // was (and the copy for the next compact to remove), after it the copy.
  if (rename(copy.c_str(), (dir + "/data.mdb").c_str()) != 0) return Errno("renaming " + copy);
  BT_RETURN_IF_ERROR(SyncDirectory(dir));
  BT_SYNC_POINT("compact.renamed");
  fs::remove_all(temp, ec);

  // LMDB's lock file still describes the old file. Opening the environment
  // while holding the exclusive lock makes this process its first user,
  // which sets the lock file up from the new file; a process that waited
  // to open meanwhile then finds it right.
  BT_ASSIGN_OR_RETURN(MDB_env * fresh, OpenEnv(dir, 0));
  mdb_env_close(fresh);
  // A lock file this process made (there was none) belongs to the store's
  // owner too: made as root, it left the service a read-only store.
  if (!had_lock_file && chown(lock_file.c_str(), before.st_uid, before.st_gid) != 0)
    return Errno("giving " + lock_file + " the owner of data.mdb");
  struct stat after;
  if (::stat((dir + "/data.mdb").c_str(), &after) == 0)
    out.bytes_after = static_cast<uint64_t>(after.st_size);
  return out;
}

}  // namespace blobtable::internal
