// SPDX-License-Identifier: Apache-2.0
// The local cache of an Azure store (docs/cache.md#the-local-cache): how a read
// may answer from it, what it counted, and how to read or clear a cache
// directory.
#ifndef BLOBTABLE_CACHE_H_
#define BLOBTABLE_CACHE_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "blobtable/export.h"
#include "blobtable/status.h"

namespace blobtable {

// How a read may answer from the local cache (StoreOptions::cache), in
// the words of HTTP caching (RFC 9111, RFC 5861). Only entity reads
// (Table::Get, Table::Query) use a policy other than Fresh; the transaction
// machinery, conditional writes and every read of lease state always ask
// storage. Without a cache: the local backend reads its files whatever the
// policy; a remote store (Azure) fails Offline reads NotFound without a
// request (nothing is cached). Storage itself (BlobStore) knows no policy:
// the store applies it.
struct ReadPolicy {
  enum class Mode {
    kFresh,     // revalidate a cached copy (If-None-Match: 304 costs no body)
    kMaxStale,  // serve a copy validated less than max_stale ago, no request
    kOffline,   // never contact storage; NotFound unless cached
  };
  Mode mode = Mode::kFresh;
  std::chrono::milliseconds max_stale{0};  // kMaxStale only
  // When storage is unreachable (refused, reset, timed out, 5xx after
  // retries), answer with the cached copy, marked stale (Entity::stale(),
  // QueryPage::stale) instead of failing Unavailable.
  bool stale_if_error = true;

  static ReadPolicy Fresh() { return {}; }
  static ReadPolicy MaxStale(std::chrono::milliseconds d) { return {Mode::kMaxStale, d, true}; }
  static ReadPolicy Offline() { return {Mode::kOffline, {}, true}; }
  // Fresh, and never stale: what transactions and conditional writes read by.
  static ReadPolicy Validate() { return {Mode::kFresh, {}, false}; }
};

// The local cache of an Azure store (StoreOptions::cache).
struct CacheOptions {
  // Reads of an Azure store go through a local LMDB cache, revalidated with
  // If-None-Match; off for the local backend, which would only duplicate.
  bool enabled = true;
  // Its directory, shared by every store and process that names it (made
  // owner-only); empty: $XDG_CACHE_HOME/blobtable, else ~/.cache/blobtable.
  std::string directory;
  // Bound on cached bytes (bodies and properties); the least recently used
  // entries are evicted beyond it.
  uint64_t max_bytes = uint64_t{1} << 30;  // 1 GiB
  // The policy of Table::Get and Table::Query when the call names none.
  ReadPolicy read_policy;
  // A stale-if-error read answers from the cache once this much time has
  // gone on a storage request that has not answered, retries or not.
  std::chrono::milliseconds stale_if_error_deadline{2'000};
  // After storage was found unreachable, reads answer from the cache without
  // trying storage for this long; the first read after it tries again.
  std::chrono::milliseconds unreachable_interval{5'000};
};

struct CacheStats {
  // Reads answered from the cache without a request (max stale, offline, a
  // listing's ETag matching the cached one).
  uint64_t hits = 0;
  // Revalidations answered 304 Not Modified: a request, no body.
  uint64_t not_modified = 0;
  // Revalidations answered 200: the blob had changed; the new body is cached.
  uint64_t changed = 0;
  // Reads of blobs not cached (a full GET).
  uint64_t misses = 0;
  // Body bytes not transferred thanks to hits and 304s.
  uint64_t bytes_saved = 0;
  // Entries dropped to stay within the size bound.
  uint64_t evictions = 0;
  // Answers marked stale (offline, storage unreachable).
  uint64_t stale = 0;
  // What the directory holds now.
  uint64_t entries = 0;
  uint64_t bytes = 0;
  std::string directory;
};

// The cache directory a store uses by default: $XDG_CACHE_HOME/blobtable
// (when it is an absolute path), else $HOME/.cache/blobtable; empty if
// neither is set.
BLOBTABLE_EXPORT std::string DefaultCacheDirectory();

// The totals of every process that used the cache in `directory` (each adds
// its counts when it closes the store) and what it holds now. NotFound if
// there is no cache there. A cache found damaged is moved aside, as a store
// opening it would, with one warning on standard error (also ClearCache).
BLOBTABLE_EXPORT Result<CacheStats> ReadCacheStats(const std::string& directory);

// Drops every entry of the cache in `directory` and zeroes its totals; OK if
// there is none.
BLOBTABLE_EXPORT Status ClearCache(const std::string& directory);

}  // namespace blobtable

#endif  // BLOBTABLE_CACHE_H_
