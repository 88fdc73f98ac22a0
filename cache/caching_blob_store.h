// SPDX-License-Identifier: Apache-2.0
// The local cache (docs/cache.md#the-local-cache): its own read entry points,
// and a BlobStore wrapper that keeps it in step with writes. It sits on top
// of the stack, under the tables: backend -> StoreOptions::wrap_blob_store
// -> cache -> Store, so request counters and fault injectors below it see
// the requests the cache really sends.
//
// Storage knows no cache: a read the cache may answer comes through Read()
// (with its ReadPolicy and the ETag a listing just showed) and a listing it
// may answer through ListCached(); the store core calls them for entity
// reads (txn/txn_context.h). Every BlobStore call goes to storage as asked:
// conditional reads, Head, lease actions, a plain Get or List. Lease state
// is never answered from the cache. Only blobs `cacheable` accepts are kept.
//
//   Read, fresh     cached: If-None-Match <etag> (304: the cached body);
//                   not cached: GET, then kept
//   Read, listed ETag equal to the cached one: the cached body, no request
//   Read, max stale cached and validated within max_stale: no request
//   Read, offline   cached: the cached body (stale); else NotFound
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
//   List, ListCached  storage's listing: entries whose ETag changed, and
//                   those gone from the listed range, are evicted; listed
//                   blobs that carry their body inline (model/inline_body.h)
//                   are kept. ListCached only, Offline, or storage
//                   unreachable with stale_if_error: the cached entries of
//                   the range, stale. A plain List is never answered from
//                   the cache: it fails as storage does.
//
// Thread-safe.
#ifndef BLOBTABLE_CACHE_CACHING_BLOB_STORE_H_
#define BLOBTABLE_CACHE_CACHING_BLOB_STORE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "blobtable/blob_store.h"
#include "blobtable/cache.h"
#include "cache/blob_cache.h"

namespace blobtable::internal {

struct CachingOptions {
  const Clock* clock = nullptr;  // null: Clock::Real()
  std::chrono::milliseconds stale_if_error_deadline{2'000};
  std::chrono::milliseconds unreachable_interval{5'000};
  // Which blobs may be cached (the table layer: entity blobs only).
  std::function<bool(std::string_view name)> cacheable;
};

// A read the cache may answer.
struct CachedReadOptions {
  ReadPolicy policy;
  // The ETag a listing just reported for this blob: a cached copy with this
  // ETag is current, and answers without a request.
  std::string listed_etag;
  std::optional<SteadyTime> deadline;  // as ReadOptions::deadline
};

// What Read answers: storage's answer, or a cached copy's.
struct CachedGet {
  GetResult result;
  // A copy the cache holds, not validated now (Offline, or storage out of
  // reach with stale_if_error): its version may be old, its lease state is.
  bool stale = false;
};

// What ListCached answers.
struct CachedList {
  ListPage page;
  // The cached entries of the range: blobs the cache never saw are missing.
  bool stale = false;
};

class CachingBlobStore final : public BlobStoreWrapper {
 public:
  CachingBlobStore(std::shared_ptr<BlobStore> target, std::shared_ptr<BlobCache> cache,
                   CachingOptions options);

  // Reads `name` as `o.policy` allows (see the table above). Fails as Get
  // does; an Offline read of a blob not cached is NotFound.
  Result<CachedGet> Read(std::string_view name, const CachedReadOptions& o);
  // Lists as List does, or, as `policy` allows, answers from the cached
  // entries of the range (stale); Unavailable for a range never listed
  // whole here while storage is out of reach.
  Result<CachedList> ListCached(const ListOptions& o, const ReadPolicy& policy);

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
  // Keeps what an applied batch put, as Put does; evicts every other blob
  // it names (a delete, or any step of a batch not applied).
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override;

  BlobCache& cache() { return *cache_; }
  std::shared_ptr<BlobCache> shared_cache() const { return cache_; }

  // Storage failed moments ago: reads that may fall back answer from the
  // copies without a request for a while (CachingOptions::unreachable_interval).
  bool storage_known_unreachable() const { return KnownUnreachable(); }

 private:
  // Caches what this store wrote and storage acknowledged (`written`),
  // its age counted from `sent`.
  void KeepOwnWrite(std::string_view name, std::string_view data, const Metadata& metadata,
                    const WriteResult& written, TimePoint sent);
  Result<CachedGet> Revalidate(std::string_view name, const CachedReadOptions& o, CacheEntry entry);
  Result<CachedGet> Fetch(std::string_view name, const CachedReadOptions& o);
  CachedGet Answer(CacheEntry entry, bool stale);
  // Storage's listing, the cache brought in line with it.
  Result<ListPage> ListAndSync(const ListOptions& o, bool has_fallback);
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
  CachedList CachedRange(const ListOptions& o);
  // CachedRange if a whole listing of the range succeeded here and every
  // row it showed is still held and intact, else Unavailable (`why`:
  // storage's failure).
  Result<CachedList> CachedRangeIfSeen(const ListOptions& o, const Status& why);
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

}  // namespace blobtable::internal

#endif  // BLOBTABLE_CACHE_CACHING_BLOB_STORE_H_
