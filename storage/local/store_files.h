// SPDX-License-Identifier: Apache-2.0
// The files of a local store's directory, and the checks that keep damage
// from looking like an empty store or crashing a reader
// (docs/backends.md#what-damages-a-local-store):
//   data.mdb, lock.mdb   LMDB's data and lock files;
//   blobtable.store      written once the data file is made: from then on a
//                        missing or empty data.mdb is damage, not a new store.
#ifndef BLOBTABLE_STORAGE_LOCAL_STORE_FILES_H_
#define BLOBTABLE_STORAGE_LOCAL_STORE_FILES_H_

#include <lmdb.h>

#include <string>
#include <vector>

#include "blobtable/status.h"
#include "util/function_ref.h"

namespace blobtable::internal {

// Before a local store is opened or made in `dir`: InvalidArgument if it is
// a file, or a directory that holds files but no store (a store is never
// made among a user's files; an empty directory, or a mount point's
// lost+found, is fine).
Status CheckStoreDirectory(const std::string& dir);
// Its first rule alone: InvalidArgument if `dir` exists and is not a
// directory (for an open that makes nothing, which says "no store" else).
Status RefuseAFile(const std::string& dir);

// Before LMDB opens `dir` (canonical): Corruption if the directory held a
// store whose data file is now missing or empty; on a store's creation,
// lock.mdb's blocks are allocated up front, so a full disk fails here with
// IOError instead of a SIGBUS when LMDB touches its map.
// Files made here get `file_mode`. A directory this user may not write to
// is left for LMDB to open read-only.
Status CheckBeforeOpen(const std::string& dir, unsigned file_mode);

// After LMDB opened it: Corruption if data.mdb is shorter than the pages its
// meta page says are in use (a truncated file would SIGBUS on read); then,
// if `mark`, marks the directory as a store (once) and syncs it.
Status CheckAfterOpen(MDB_env* env, const std::string& dir, bool mark, unsigned file_mode);

// Calls `fn` with the page numbers of each record of LMDB's free list
// (database 0) as `txn` sees it: each record a count, then that many page
// numbers (as mdb_stat -f reads it). LMDB's error, or 0 once all were seen.
int ForEachFreeRun(MDB_txn* txn, FunctionRef<void(const std::vector<size_t>& pages)> fn);

// fsync of directory `dir` (after a file in it was made or renamed).
Status SyncDirectory(const std::string& dir);

// For LMDB failure `rc` while writing in `dir`: " (no space left: N bytes
// free on the file system of DIR)" when it is ENOSPC, or EIO (what a short
// write becomes) with under 16 MiB free; else "".
std::string SpaceHint(const std::string& dir, int rc);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_LOCAL_STORE_FILES_H_
