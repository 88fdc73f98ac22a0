// SPDX-License-Identifier: Apache-2.0
#include "cache/cache_check.h"

#include <lmdb.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "storage/local/lmdb_page_walk.h"

namespace blobtable::internal {
namespace {

// Exit codes of the checking child.
constexpr int kClean = 0;
constexpr int kLmdbFailed = 10;  // LMDB said the file is damaged
constexpr int kUndecided = 11;   // another LMDB error: no verdict
constexpr int kCheckTimeoutMs = 10'000;

// The first and last byte of `v`: a value's pages are contiguous, so its
// whole extent is then known to lie in the file (a page number flipped
// past its end faults here, in the child). What lies inside is the
// entries' own CRC's to judge, when they are read.
unsigned Ends(const MDB_val& v) {
  if (v.mv_size == 0) return 0;
  const auto* bytes = static_cast<const volatile unsigned char*>(v.mv_data);
  return bytes[0] + bytes[v.mv_size - 1];
}

// Walks every key and value of `dbi` (every branch and leaf page, and the
// ends of every value), and each named database it lists if it is the main
// one.
int ReadAll(MDB_txn* txn, MDB_dbi dbi, bool main, unsigned* sum) {
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(txn, dbi, &cursor);
  if (rc != 0) return rc;
  MDB_val k, v;
  while ((rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) == 0) {
    *sum += Ends(k) + Ends(v);
    if (!main) continue;
    const std::string name(static_cast<const char*>(k.mv_data), k.mv_size);
    MDB_dbi named;
    if ((rc = mdb_dbi_open(txn, name.c_str(), 0, &named)) != 0) break;
    if ((rc = ReadAll(txn, named, /*main=*/false, sum)) != 0) break;
  }
  mdb_cursor_close(cursor);
  return rc == MDB_NOTFOUND ? 0 : rc;
}

// In the child: the whole check. An LMDB error's code, or 0.
int Check(const std::string& directory, uint64_t map_size) {
  MDB_env* env = nullptr;
  int rc = mdb_env_create(&env);
  if (rc == 0) rc = mdb_env_set_maxdbs(env, 16);
  if (rc == 0) rc = mdb_env_set_mapsize(env, map_size);
  if (rc == 0) rc = mdb_env_open(env, directory.c_str(), MDB_NOSYNC, 0600);
  unsigned sum = 0;
  MDB_dbi main_dbi = 0;
  MDB_txn* txn = nullptr;
  if (rc == 0) rc = mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn);
  // The pages first, read from the file (LMDB follows a damaged page
  // number or node size past the file's end and faults, or writes over
  // memory): the snapshot this read transaction pins.
  if (rc == 0 && !WalkLmdbPages(directory + "/data.mdb", mdb_txn_id(txn)).empty())
    rc = MDB_CORRUPTED;
  if (rc == 0) rc = mdb_dbi_open(txn, nullptr, 0, &main_dbi);
  if (rc == 0) rc = ReadAll(txn, main_dbi, /*main=*/true, &sum);
  if (rc == 0) rc = ReadAll(txn, /*FREE_DBI=*/0, /*main=*/false, &sum);  // read-only txns only
  if (txn != nullptr) mdb_txn_abort(txn);
  // A write: allocating pages reads the free list, as every later write
  // of the cache will.
  txn = nullptr;
  if (rc == 0) rc = mdb_txn_begin(env, nullptr, 0, &txn);
  MDB_val k{std::strlen("check"), const_cast<char*>("check")}, v{sizeof sum, &sum};
  if (rc == 0) rc = mdb_put(txn, main_dbi, &k, &v, 0);
  if (rc == 0) rc = mdb_del(txn, main_dbi, &k, nullptr);
  if (rc == 0) {
    rc = mdb_txn_commit(txn);
  } else if (txn != nullptr) {
    mdb_txn_abort(txn);
  }
  mdb_env_close(env);
  return rc;
}

// What says damage: LMDB's own verdicts on the file, and the signals a bad
// page raises. Anything else (a full reader table, a signal meant for the
// whole process group, the OOM killer) says nothing about the file.
bool IsDamage(int rc) {
  return rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND || rc == MDB_INVALID ||
         rc == MDB_VERSION_MISMATCH || rc == MDB_BAD_TXN || rc == MDB_BAD_DBI;
}
constexpr int kFaults[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};

[[noreturn]] void RunCheck(const std::string& directory, uint64_t map_size) {
  // The process's crash handlers are not the child's: a fault must end it.
  for (int sig : kFaults) signal(sig, SIG_DFL);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_IGN);
  const int rc = Check(directory, map_size);
  _exit(rc == 0 ? kClean : IsDamage(rc) ? kLmdbFailed : kUndecided);
}

}  // namespace

std::string CheckLmdbInChild(const std::string& directory, uint64_t map_size) {
  const pid_t child = fork();
  if (child < 0) return "";  // no check possible: go on as before
  if (child == 0) RunCheck(directory, map_size);
  // Bounded: a check that waits (another process's long write holds
  // LMDB's writer lock) is given up, without a verdict.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, child, 0));
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    int ready;
    while ((ready = poll(&p, 1, kCheckTimeoutMs)) < 0 && errno == EINTR) {}
    close(pidfd);
    if (ready == 0) kill(child, SIGKILL);  // given up: no verdict
    if (ready <= 0) {
      (void)waitpid(child, nullptr, 0);
      return "";
    }
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return "";
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    for (int fault : kFaults)
      if (sig == fault) return std::string("a check of it crashed (") + strsignal(sig) + ")";
    return "";
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == kLmdbFailed)
    return "a check of it found it damaged";
  return "";
}

}  // namespace blobtable::internal
