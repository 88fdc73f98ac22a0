// SPDX-License-Identifier: Apache-2.0
// The local cache's storage: blobs of remote stores kept in an LMDB
// environment of their own directory (docs/cache.md#the-local-cache).
//
// Entries are keyed by scope (endpoint, account and container: a store's
// Location() and container()) and blob name, and hold what a read answers:
// ETag, last modified, length, metadata, the body, a CRC-32 of the whole
// entry, and when storage last confirmed that version. Lease state is never
// kept: a lease changes no ETag, so no revalidation could vouch for it.
//
// The cache is never the source of truth and never stops a store from
// working: a damaged entry is dropped (and refetched by the caller), a
// cache that cannot be opened as one (truncated, another format, not LMDB)
// is moved aside and rebuilt with one warning, and a cache that cannot be
// written makes every call a miss. Hence no Status in this interface.
//
// Commits are not flushed (MDB_NOSYNC): a crash of the machine can lose the
// last entries, never consistency. A hit writes nothing unless its entry's
// access time is over a minute old (coarse LRU bookkeeping).
//
// Thread-safe; several processes may share one directory.
#ifndef BLOBTABLE_CACHE_BLOB_CACHE_H_
#define BLOBTABLE_CACHE_BLOB_CACHE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/blob_store.h"
#include "blobtable/cache.h"
#include "blobtable/clock.h"

namespace blobtable::internal {

class LmdbEnv;

// This process's counts, by CacheStats field.
struct CacheCounters {
  std::atomic<uint64_t> hits{0}, not_modified{0}, changed{0}, misses{0}, bytes_saved{0},
      evictions{0}, stale{0};
};

struct CacheEntry {
  std::string name;
  // etag, last_modified, content_length and metadata; lease fields unset.
  BlobProperties properties;
  std::string data;
  // The send time of the latest request whose answer confirmed this
  // version (by the wall clock): the version was current then or later, so
  // its age is counted from it, never from when the answer arrived.
  TimePoint validated;
  // From when every request sent sees this version or a later one: the
  // send time of a read that confirmed it, the acknowledgement of this
  // process's own write (sent earlier, applied by then). An answer to a
  // read sent before it never replaces the entry, in any process.
  TimePoint ordered;
};

class BlobCache {
 public:
  using Warn = std::function<void(const std::string&)>;
  // Its LMDB databases (entries, lru, meta), held open while it lives.
  struct Dbs {
    unsigned entries, lru, meta;
  };

  // Opens (creating, owner-only) the cache in `directory`, holding up to
  // `max_bytes` of entries. Fails (IOError) only if no cache can be made
  // there at all; the caller then goes on without one.
  static Result<std::shared_ptr<BlobCache>> Open(const std::string& directory, uint64_t max_bytes,
                                                 const Clock* clock, Warn warn);
  ~BlobCache();
  BlobCache(const BlobCache&) = delete;
  BlobCache& operator=(const BlobCache&) = delete;

  const std::string& directory() const { return directory_; }

  // The entry for `name` in `scope`, if cached and intact.
  std::optional<CacheEntry> Lookup(std::string_view scope, std::string_view name);
  // What a change to the cache comes from. A read's answer (kRead, sent at
  // entry.validated or `sent`) never replaces or evicts an entry confirmed
  // by a request sent after it: an answer that was slow to arrive may be
  // older than the entry, and the cache never moves back. A write of this
  // process's (kOwnWrite), just acknowledged, replaces whatever is there.
  enum class Source { kRead, kOwnWrite };
  // For a read's change: whether this process acknowledged a write of the
  // blob after the read was sent (asked inside the LMDB write).
  using Fenced = std::function<bool(std::string_view name)>;
  // Stores (or replaces) an entry. Entries over an eighth of max_bytes are
  // not kept.
  void Put(std::string_view scope, const CacheEntry& entry, Source source,
           const Fenced& fenced = {});
  // Evicts the entries named in `drop`, then stores those in `keep` (as
  // Put), in one write; all from one read sent at `sent`.
  void Update(std::string_view scope, std::span<const CacheEntry> keep,
              std::span<const std::string> drop, TimePoint sent, const Fenced& fenced = {});
  // Storage confirmed `etag` for `name` in answer to a request sent at
  // `sent` (a 304).
  void Validated(std::string_view scope, std::string_view name, std::string_view etag,
                 TimePoint sent);
  // Drops `name`: a write of this process's whose outcome leaves the cached
  // copy in doubt (kOwnWrite), or a read sent at `sent` that found it gone.
  void Evict(std::string_view scope, std::string_view name, Source source, TimePoint sent = {},
             const Fenced& fenced = {});
  // Every entry of `scope` whose name starts with `prefix`, in name order,
  // from `start_from` on (inclusive); bodies left empty unless `with_data`.
  std::vector<CacheEntry> Range(std::string_view scope, std::string_view prefix,
                                std::string_view start_from, bool with_data = true);

  // A listing of the whole of `prefix` in `scope` succeeded and showed
  // `names`: the cache has seen that range (as of then).
  void SawRange(std::string_view scope, std::string_view prefix,
                const std::vector<std::string>& names);
  // The names the last whole listing of `prefix`, or of the nearest prefix
  // of it listed whole, showed; nullopt if none ever succeeded here. The
  // cached entries may stand for the range only while every one of these
  // names is held and intact (the caller checks).
  std::optional<std::vector<std::string>> KnownRange(std::string_view scope,
                                                     std::string_view prefix);
  // Forgets every listing of a range holding `name` (a row of it that is
  // not held: damaged, never read, too large to keep).
  void ForgetRangesHolding(std::string_view scope, std::string_view name);

  // Counters of this process (added to the directory's totals on close).
  CacheCounters& counters() { return counters_; }
  // Totals of every process that closed a cache here, plus this one's, and
  // what the directory holds now.
  CacheStats Stats();
  // Drops every entry and zeroes the totals.
  Status Clear();

 private:
  BlobCache(std::shared_ptr<LmdbEnv> env, Dbs dbs, std::string directory, uint64_t max_bytes,
            const Clock* clock, Warn warn, int lock_fd);
  // Runs `fn(txn)` in a write transaction and commits; a failure warns once.
  template <typename Fn>
  bool Write(Fn&& fn);
  void WarnOnce(const std::string& what);
  void EvictOverBound();
  // Update, for a read sent at `sent`, or (unset) this process's write.
  void Apply(std::string_view scope, std::span<const CacheEntry> keep,
             std::span<const std::string> drop, std::optional<TimePoint> sent,
             const Fenced& fenced);
  void FlushCounters();

  std::shared_ptr<LmdbEnv> env_;
  Dbs dbs_;
  std::string directory_;
  uint64_t max_bytes_;
  const Clock* clock_;
  Warn warn_;
  int lock_fd_;  // flock shared while open: compaction waits for sole use
  std::atomic<bool> warned_{false};
  CacheCounters counters_;
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_CACHE_BLOB_CACHE_H_
