// SPDX-License-Identifier: Apache-2.0
// A copy of an LMDB environment with every page filled: what `compact`
// writes (docs/cli.md#backup-compaction-and-figures).
//
// LMDB's own compacting copy (mdb_env_copy2 with MDB_CP_COMPACT) leaves out
// the free pages but copies every other page as it is, so a tree whose pages
// are half full (LMDB splits a full page in two, and random inserts leave
// its pages about 70 % full; a scattered delete leaves many pages with a
// few records) stays as large. This copy writes each database's records
// again in key order with MDB_APPEND, which fills each page before it
// starts the next: the copy is about the size of what the records hold.
#ifndef BLOBTABLE_STORAGE_LOCAL_DENSE_COPY_H_
#define BLOBTABLE_STORAGE_LOCAL_DENSE_COPY_H_

#include <lmdb.h>

#include <string>

#include "blobtable/status.h"

namespace blobtable::internal {

// Copies every database `source` holds (as its read transaction `txn` sees
// it) into a new environment in directory `dest` (empty, made by the
// caller), with map size `map_size`, synced when it returns OK. A blob's
// record of an older format (storage/local/blob_record.h) is written in
// the current one; a record that does not decode is copied as it is (a
// copy never changes what damage there is). IOError or LMDB's error
// otherwise; Internal for a database of a kind blobtable never makes
// (sorted duplicates).
Status DenseCopy(MDB_txn* txn, const std::string& dest, size_t map_size);

// About the size of the file DenseCopy would write from `txn`'s snapshot
// (records of older formats counted as they are): every database's records
// laid out as LMDB lays out a leaf (node header, key, value or overflow
// pages) and packed into pages, with a branch level's worth per level
// above them. Reads every record once; LMDB's error if a read fails.
Result<uint64_t> DenseSize(MDB_txn* txn);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_LOCAL_DENSE_COPY_H_
