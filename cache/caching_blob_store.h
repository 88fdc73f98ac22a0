// SPDX-License-Identifier: Apache-2.0
// The local cache as a BlobStore wrapper (README "The local cache"). It sits
// on top of the stack, under the tables: backend -> StoreOptions::
// wrap_blob_store -> cache -> Store, so request counters and fault injectors
// below it see the requests the cache really sends.
//
// What it answers from the cache: only Get calls that ask for it
// (ReadOptions::policy, listed_etag; the table layer's entity reads), and
// only for blobs `cacheable` accepts. Everything else goes to storage:
// conditional reads, Head, every lease action, every read of the
// transaction machinery. Lease state is never answered from the cache.
//
//   Get, fresh      cached: If-None-Match <etag> (304: the cached body);
//                   not cached: GET, then kept
//   Get, listed ETag equal to the cached one: the cached body, no request
//   Get, max stale  cached and validated within max_stale: no request
//   Get, offline    cached: the cached body (stale); else NotFound
//   stale-if-error  storage unreachable (Unavailable, or no answer by
//                   stale_if_error_deadline): the cached body, stale; and
//                   for unreachable_interval after, no request is tried
//   Put, SetMetadata (success): the cache takes the new version
//   Delete, any failed write: the entry is evicted
//
// An entry never moves back to an older version, and its age counts from
// the send time of the request that confirmed it: an answer stored is
// stamped with its request's send time and never replaces an entry
// confirmed by a later-sent request (BlobCache::Source), and no answer to a
// request sent before this process's write or delete of the blob was
// acknowledged changes its entry (a slow read landing after the write).
//   List            passes through; entries whose ETag changed, and those
//                   gone from the listed range, are evicted; listed blobs
//                   that carry their body inline (remote/inline_body.h) are
//                   kept. Offline, or storage unreachable with
//                   stale_if_error: the cached entries of the range, stale
//
// Thread-safe.
#ifndef BLOBTABLE_CACHE_CACHING_BLOB_STORE_H_
#define BLOBTABLE_CACHE_CACHING_BLOB_STORE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "blobtable/blob_store.h"
#include "cache/blob_cache.h"

namespace blobtable {

struct CachingOptions {
  const Clock* clock = nullptr;  // null: Clock::Real()
  std::chrono::milliseconds stale_if_error_deadline{2'000};
  std::chrono::milliseconds unreachable_interval{5'000};
  // Which blobs may be cached (the table layer: entity blobs only).
  std::function<bool(std::string_view name)> cacheable;
};

class CachingBlobStore final : public BlobStoreWrapper {
 public:
  CachingBlobStore(std::shared_ptr<BlobStore> target, std::shared_ptr<BlobCache> cache,
                   CachingOptions options);

  Result<GetResult> Get(std::string_view name, const ReadOptions& o) override;
  Result<WriteResult> Put(std::string_view name, std::string_view data,
                          const PutOptions& o) override;
  Status Delete(std::string_view name, const WriteOptions& o) override;
  Result<WriteResult> SetMetadata(std::string_view name, const Metadata& m,
                                  const WriteOptions& o) override;
  Result<ListPage> List(const ListOptions& o) override;
  // As its target's, except that it lists without the bodies: a body
  // listed with its row would bypass the cache (neither cached nor
  // revalidated), and a listing the cache answers has none.
  BlobStoreTraits traits() const override {
    BlobStoreTraits t = BlobStoreWrapper::traits();
    t.list_data = false;
    return t;
  }
  // Evicts every blob a batch names, whatever its outcome.
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override;

  BlobCache& cache() { return *cache_; }

 private:
  Result<GetResult> Revalidate(std::string_view name, const ReadOptions& o, CacheEntry entry);
  Result<GetResult> Fetch(std::string_view name, const ReadOptions& o);
  GetResult Answer(CacheEntry entry, bool stale);
  // When a request was sent: by the wall clock (an entry's age), and in
  // this process's order of sends and acknowledgements (fences).
  struct Sent {
    TimePoint at;
    uint64_t seq = 0;
  };
  Sent SendingNow() { return Sent{o_.clock->Now(), ++seq_}; }
  // Stores what storage answered for `name` to a read sent at `sent`.
  void Keep(std::string_view name, const GetResult& got, const Sent& sent);
  // This process's write or delete of `name` was just answered (whatever
  // the answer): reads sent before now must not change its entry.
  void Fence(std::string_view name);
  // Whether a write of this process's to `name` was answered after a read
  // was sent at `sent`.
  bool Fenced(std::string_view name, const Sent& sent) const;
  // Fenced(name, sent) for the cache to ask inside its write.
  BlobCache::Fenced FencedSince(const Sent& sent) const;
  // When a request must answer by: the caller's deadline, and with
  // stale-if-error, stale_if_error_deadline from now (the cached copy then
  // answers instead).
  std::optional<SteadyTime> DeadlineFor(const ReadPolicy& policy,
                                        std::optional<SteadyTime> caller) const;
  Result<ListPage> CachedRange(const ListOptions& o);
  // CachedRange if a listing of the range ever succeeded here, else
  // Unavailable (`why`: storage's failure).
  Result<ListPage> CachedRangeIfSeen(const ListOptions& o, const Status& why);
  // Brings the cached entries of the range a listing covered in line with
  // it (see List).
  void SyncListedRange(const ListOptions& o, const ListPage& page, const Sent& sent);
  // Storage unreachable: remember for unreachable_interval.
  void Unreachable();
  void Reachable() { unreachable_until_ms_.store(0); }
  // A write's answer says as much about storage as a read's does.
  void NoteWrite(const Status& s);
  bool KnownUnreachable() const;
  bool Cacheable(std::string_view name) const { return !o_.cacheable || o_.cacheable(name); }

  std::shared_ptr<BlobCache> cache_;
  CachingOptions o_;
  std::string scope_;
  std::atomic<int64_t> unreachable_until_ms_{0};  // Clock::Steady, ms
  // Blob -> when this process's last write to it was answered; entries
  // older than any request can take are dropped as it grows.
  std::atomic<uint64_t> seq_{0};
  mutable std::mutex fence_mu_;
  std::unordered_map<std::string, Sent> fences_;
};

}  // namespace blobtable

#endif  // BLOBTABLE_CACHE_CACHING_BLOB_STORE_H_
