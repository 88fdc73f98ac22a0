#include "cache/cache_check.h"

#include <lmdb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

namespace blobtable {
namespace {

// Exit codes of the checking child.
constexpr int kClean = 0;
constexpr int kLmdbFailed = 10;  // + nothing: the reason is not passed up

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

}  // namespace

std::string CheckLmdbInChild(const std::string& directory, uint64_t map_size) {
  const pid_t child = fork();
  if (child < 0) return "";  // no check possible: go on as before
  if (child == 0) _exit(Check(directory, map_size) == 0 ? kClean : kLmdbFailed);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return "";
  }
  if (WIFSIGNALED(status))
    return std::string("a check of it crashed (") + strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status) && WEXITSTATUS(status) != kClean) return "a check of it found it damaged";
  return "";
}

}  // namespace blobtable
