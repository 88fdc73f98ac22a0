// SPDX-License-Identifier: Apache-2.0
#include "storage/local/store_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <vector>
#include <cerrno>
#include <cstring>

#include "storage/local/lmdb_page_walk.h"
#include "util/macros.h"
#include "util/stored_format.h"

namespace blobtable::internal {
namespace {

const std::string kMarker = std::string("/") + kStoreMarkerFile;
// More than LMDB's lock file needs for 1,024 readers (64 bytes each plus a
// header); LMDB sets the exact size itself, within these blocks.
constexpr off_t kLockFileBytes = 256 << 10;

Status Errno(const std::string& what, int err) {
  return Status::IOError(what + ": " + std::strerror(err));
}

bool Exists(const std::string& path, struct stat* st) { return stat(path.c_str(), st) == 0; }

}  // namespace

int ForEachFreeRun(MDB_txn* txn, FunctionRef<void(const std::vector<size_t>& pages)> fn) {
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(txn, 0, &cursor);
  if (rc != 0) return rc;
  MDB_val key, value;
  std::vector<size_t> words, pages;
  for (rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    words.resize(value.mv_size / sizeof(size_t));
    std::memcpy(words.data(), value.mv_data, words.size() * sizeof(size_t));
    pages.clear();
    for (size_t i = 1; i < words.size() && i <= words[0]; ++i) pages.push_back(words[i]);
    fn(pages);
  }
  mdb_cursor_close(cursor);
  return rc == MDB_NOTFOUND ? 0 : rc;
}

Status SyncDirectory(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("opening directory " + dir + " to sync it", errno);
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  return rc == 0 ? Status::OK() : Errno("syncing directory " + dir, err);
}

Status RefuseAFile(const std::string& dir) {
  struct stat st;
  if (Exists(dir, &st) && !S_ISDIR(st.st_mode))
    return Status::InvalidArgument(dir + " is a file, not a store directory");
  return Status::OK();
}

Status CheckStoreDirectory(const std::string& dir) {
  BT_RETURN_IF_ERROR(RefuseAFile(dir));
  struct stat st;
  if (!Exists(dir, &st)) return Status::OK();  // made by the open
  if (Exists(dir + "/data.mdb", &st) || Exists(dir + kMarker, &st)) return Status::OK();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    // A store's own files: another thread or process may be making it now.
    if (name != "lock.mdb" && name != "data.mdb" && name != kStoreMarkerFile &&
        name != "lost+found")
      return Status::InvalidArgument(dir + " holds files (" + name +
                                     ", ...) but no blobtable store: a store is made only in a "
                                     "new or empty directory");
  }
  return Status::OK();  // unreadable: the open says why
}

Status CheckBeforeOpen(const std::string& dir, unsigned file_mode) {
  struct stat st;
  const std::string data = dir + "/data.mdb";
  if (Exists(dir + kMarker, &st)) {
    if (!Exists(data, &st))
      return Status::Corruption("local store " + dir +
                                ": data.mdb is missing, but the directory "
                                "held a store (blobtable.store): restore it from a backup");
    if (st.st_size == 0)
      return Status::Corruption("local store " + dir +
                                ": data.mdb is empty, but the directory "
                                "held a store (blobtable.store): restore it from a backup");
    return Status::OK();
  }
  const std::string lock = dir + "/lock.mdb";
  if (Exists(lock, &st)) return Status::OK();
  int fd = open(lock.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, file_mode);
  if (fd < 0) {
    if (errno == EEXIST || errno == EACCES || errno == EROFS) return Status::OK();  // see LMDB
    return Errno("creating " + lock, errno);
  }
  int rc = posix_fallocate(fd, 0, kLockFileBytes);
  close(fd);
  if (rc != 0) {
    unlink(lock.c_str());
    return Errno("creating the local store in " + dir + " (allocating lock.mdb)", rc);
  }
  return Status::OK();
}

// A data file may legitimately end before the last page its meta page
// counts: LMDB never writes a page that its transaction allocated at the end
// and freed again before committing (a "loose" page; a large delete leaves
// some), and the page goes to the free list. A file cut short instead lacks
// pages in use. So every page reachable from the last commit (its trees,
// the free list's, every overflow run) must lie inside the file, judged by
// reading the file (lmdb_page_walk.h: through LMDB, a page past the end
// would fault) and before anything is written: a damaged file is never
// changed. Only then, if `extend`, is the file made as long as the meta
// page says (zeros: no read past its end can SIGBUS; LMDB itself extends it
// so when it writes there); else `truncated`.
Status ShortOnlyByFreePages(MDB_env* env, const std::string& data, uint64_t needed, bool extend,
                            const Status& truncated) {
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn);  // pins the snapshot walked
  if (rc != 0) return Status::IOError("reading " + data + ": " + mdb_strerror(rc));
  const std::string damage = WalkLmdbPages(data, mdb_txn_id(txn));
  mdb_txn_abort(txn);
  if (!damage.empty()) return Status::Corruption(truncated.message() + " (" + damage + ")");
  if (!extend) return Status::OK();
  const int fd = open(data.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Errno("opening " + data, errno);
  rc = posix_fallocate(fd, 0, static_cast<off_t>(needed));  // never shrinks it
  close(fd);
  if (rc != 0) return Errno("extending " + data + " to the length its meta page says", rc);
  return Status::OK();
}

Status CheckAfterOpen(MDB_env* env, const std::string& dir, bool mark, unsigned file_mode) {
  MDB_envinfo info;
  MDB_stat stat_info;
  if (mdb_env_info(env, &info) != 0 || mdb_env_stat(env, &stat_info) != 0)
    return Status::IOError("local store " + dir + ": cannot read LMDB's meta page");
  struct stat st;
  const std::string data = dir + "/data.mdb";
  if (!Exists(data, &st)) return Errno("local store " + dir + ": data.mdb", errno);
  const uint64_t needed = (static_cast<uint64_t>(info.me_last_pgno) + 1) * stat_info.ms_psize;
  if (static_cast<uint64_t>(st.st_size) < needed) {
    const Status truncated =
        Status::Corruption("local store " + dir + ": data.mdb is truncated (" +
                           std::to_string(st.st_size) + " bytes, but its meta page says " +
                           std::to_string(needed) + " are in use): restore it from a backup");
    // Read-only: nothing may be added (a read past the end would SIGBUS,
    // and no page of the last commit lies there).
    BT_RETURN_IF_ERROR(ShortOnlyByFreePages(env, data, needed, /*extend=*/mark, truncated));
  }
  struct stat marker;
  if (!mark || Exists(dir + kMarker, &marker)) return Status::OK();
  // LMDB wrote the new file's meta pages without a sync: the file is made
  // durable before the marker says it exists, or a power cut between them
  // left a marker beside an empty data.mdb, which is damage to every later
  // open (the review of issue 57).
  int data_fd = open(data.c_str(), O_RDONLY | O_CLOEXEC);
  if (data_fd < 0 || fsync(data_fd) != 0) {
    const int err = errno;
    if (data_fd >= 0) close(data_fd);
    return Errno("syncing " + data, err);
  }
  close(data_fd);
  int fd = open((dir + kMarker).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, file_mode);
  if (fd < 0) return Errno("marking " + dir + " as a store", errno);
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  if (rc != 0) return Errno("marking " + dir + " as a store", err);
  // data.mdb, lock.mdb and the marker are named durably, and so is the
  // directory itself if it was just made.
  Status synced = SyncDirectory(dir);
  if (!synced.ok()) return synced;
  const size_t slash = dir.find_last_of('/');
  return SyncDirectory(slash == 0 ? "/" : dir.substr(0, slash));
}

std::string SpaceHint(const std::string& dir, int rc) {
  if (rc != ENOSPC && rc != EIO) return "";
  struct statvfs vfs;
  if (statvfs(dir.c_str(), &vfs) != 0) return "";
  const uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  if (rc == EIO && free_bytes >= (uint64_t{16} << 20)) return "";
  return " (no space left: " + std::to_string(free_bytes) + " bytes free on the file system of " +
         dir + ")";
}

}  // namespace blobtable::internal
