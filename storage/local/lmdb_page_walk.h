// SPDX-License-Identifier: Apache-2.0
// A structural check of an LMDB data file (data.mdb) made by reading it
// with pread, never by mapping it: a damaged file cannot fault the caller.
// LMDB trusts its pages: a page number or a node size flipped past the
// file's end makes a read or a write through LMDB fault (SIGBUS, SIGSEGV)
// or corrupt memory. This walks what LMDB would follow: both meta pages,
// the free list and the main database's B-tree, every named database's,
// every overflow page, and checks each against the file's size and the
// page's own layout.
//
// The on-disk format is LMDB 0.9's (lmdb.h's MDB_page, MDB_node, MDB_db,
// MDB_meta; 64-bit): the format of the liblmdb this project links.
#ifndef BLOBTABLE_STORAGE_LOCAL_LMDB_PAGE_WALK_H_
#define BLOBTABLE_STORAGE_LOCAL_LMDB_PAGE_WALK_H_

#include <cstdint>
#include <string>

#include "blobtable/status.h"

namespace blobtable::internal {

// "" if every page of `data_file` reachable from the meta page of
// transaction `txnid` (a read transaction's mdb_txn_id, which pins that
// snapshot while the walk runs: other processes may be writing) is
// consistent and inside the file; otherwise what is wrong, in words (the
// first fault found). A file that cannot be read says so. If neither meta
// page holds `txnid` any more (two commits since), "": no verdict.
std::string WalkLmdbPages(const std::string& data_file, uint64_t txnid);

// "" unless both meta pages of `data_file` (LMDB's, read before any
// mapping) name one sound page size: LMDB divides by it, and a flipped bit
// there made every command die of SIGFPE (the review of issue 55). A
// missing or short file is LMDB's to judge.
std::string CheckLmdbMetaPages(const std::string& data_file);

class LmdbEnv;
// WalkLmdbPages on `env`'s data file, in a read transaction's snapshot:
// Corruption naming the damage (restore from a backup), else OK. Reads the
// whole file: for `check`, `backup` and `compact`, not for every open.
// (storage/local/local_check.cc)
Status CheckPages(LmdbEnv& env);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_LOCAL_LMDB_PAGE_WALK_H_
