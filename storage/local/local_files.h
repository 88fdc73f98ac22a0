// SPDX-License-Identifier: Apache-2.0
// A local store's files as a whole: their figures, a consistent copy made
// while writers go on, and compaction (docs/cli.md#backup-compaction-and-figures).
#ifndef BLOBTABLE_STORAGE_LOCAL_LOCAL_FILES_H_
#define BLOBTABLE_STORAGE_LOCAL_LOCAL_FILES_H_

#include <cstdint>
#include <memory>
#include <string>

#include "blobtable/blob_store.h"
#include "blobtable/status.h"
#include "storage/local/lmdb_env.h"
#include "util/metrics.h"

namespace blobtable::internal {

// Offered by the local backend (Store finds it by dynamic_cast, as it finds
// storage/in_place.h): its environment.
class LocalFiles {
 public:
  virtual ~LocalFiles() = default;
  virtual LmdbEnv& lmdb() const = 0;
};

struct FileFigures {
  uint64_t file_bytes = 0;  // data.mdb's size
  uint64_t page_size = 0;
  uint64_t pages_used = 0;       // up to the last page in use (the file's live part)
  uint64_t free_pages = 0;       // of those, free for reuse (LMDB's free list)
  int readers = 0;               // reader slots in use, in every process
  uint64_t map_bytes = 0;        // the map's size: how far the file may grow before it is remapped
  uint64_t compacted_bytes = 0;  // about the file's size after CompactInPlace
};

// The figures of `env`'s files, read in one read transaction; with
// `compacted`, reading every record for compacted_bytes (else left 0).
Result<FileFigures> FiguresOf(LmdbEnv& env, bool compacted = true);

// Adds the data file's figures to `registry` (Store::Metrics), read when a
// snapshot is taken: `files` is the backend, kept as long as the registry.
void CountLocalFiles(MetricsRegistry& registry, std::shared_ptr<BlobStore> files);

// Copies `env` (every container) into `dest`, a directory that must not
// exist or be empty, as it is in one read transaction (LMDB's mdb_env_copy:
// writers go on), synced; the copy opens as a store. InvalidArgument if
// `dest` holds files; IOError as the file system says.
Status HotCopy(LmdbEnv& env, const std::string& dest);

struct Compacted {
  uint64_t bytes_before = 0, bytes_after = 0;
};

// Rewrites the store in `dir` without its free pages (mdb_env_copy with
// MDB_CP_COMPACT) and puts the copy in its place. Only while no process
// has the store open: Busy naming the process that has (this one
// included), checked under an exclusive lock on LMDB's lock file that keeps
// any other process from opening it until the copy is in place. NotFound if
// `dir` holds no store.
Result<Compacted> CompactInPlace(const std::string& dir);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_LOCAL_LOCAL_FILES_H_
