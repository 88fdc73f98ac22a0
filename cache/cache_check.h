// SPDX-License-Identifier: Apache-2.0
// A check of a cache's LMDB file where a crash cannot hurt: in a child
// process (docs/cache.md#the-local-cache). LMDB trusts its file: a damaged page
// can fail an assertion or fault in the process that reads it, and a cache
// that crashed every process opening it would be worse than none.
#ifndef BLOBTABLE_CACHE_CACHE_CHECK_H_
#define BLOBTABLE_CACHE_CACHE_CHECK_H_

#include <cstdint>
#include <string>

namespace blobtable::internal {

// Forks a child that opens the environment in `directory` (its own, not
// this process's), walks the data file's pages from the file itself
// (storage/local/lmdb_page_walk.h), reads every page of every database
// through LMDB (the free list included) and commits a small write; empty
// if it found nothing wrong,
// else what went wrong ("a check of it crashed: Aborted", an LMDB error).
// The directory must hold data.mdb. Safe in a process with threads: the
// child calls only LMDB and exits.
std::string CheckLmdbInChild(const std::string& directory, uint64_t map_size);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_CACHE_CACHE_CHECK_H_
