// SPDX-License-Identifier: Apache-2.0
#include "cache/caching_blob_store.h"

#include <map>
#include <set>

#include "storage/conditions.h"
#include "storage/storage_errors.h"
#include "model/inline_body.h"
#include "util/macros.h"

namespace blobtable::internal {
namespace {

int64_t SteadyMs(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.Steady().time_since_epoch())
      .count();
}

}  // namespace

CachingBlobStore::CachingBlobStore(std::shared_ptr<BlobStore> target,
                                   std::shared_ptr<BlobCache> cache, CachingOptions options)
    : BlobStoreWrapper(std::move(target)), cache_(std::move(cache)), o_(std::move(options)) {
  if (o_.clock == nullptr) o_.clock = Clock::Real();
  // Every Azurite is devstoreaccount1: the endpoint (with its port) tells
  // them apart, and names the account.
  scope_ = BlobStoreWrapper::Location() + "\n" + BlobStoreWrapper::container();
}

void CachingBlobStore::Unreachable() {
  unreachable_until_ms_.store(SteadyMs(*o_.clock) + o_.unreachable_interval.count());
}

void CachingBlobStore::NoteWrite(const Status& s) {
  // Only a write that never reached storage (a refused connection) says it
  // is out of reach: a write cut short by its own deadline says nothing.
  if (s.ok())
    Reachable();
  else if (s.IsUnavailable() && s.storage_code() == kNotSent)
    Unreachable();
}

bool CachingBlobStore::KnownUnreachable() const {
  const int64_t until = unreachable_until_ms_.load();
  return until != 0 && SteadyMs(*o_.clock) < until;
}

std::optional<SteadyTime> CachingBlobStore::DeadlineFor(const ReadPolicy& policy,
                                                        std::optional<SteadyTime> caller) const {
  std::optional<SteadyTime> d = caller;
  if (policy.stale_if_error) {
    const SteadyTime fallback = o_.clock->Steady() + o_.stale_if_error_deadline;
    if (!d || fallback < *d) d = fallback;
  }
  return d;
}

void CachingBlobStore::Keep(std::string_view name, const GetResult& got, const Sent& sent) {
  cache_->Put(scope_, CacheEntry{std::string(name), got.properties, got.data, sent.at, sent.at},
              BlobCache::Source::kRead, FencedSince(sent));
}

void CachingBlobStore::Fence(std::string_view name) {
  // No request lives this long (the retry budget is a minute by default):
  // older fences can no longer stop anything.
  constexpr auto kLongestRequest = std::chrono::minutes(10);
  const Sent now = SendingNow();
  std::lock_guard<std::mutex> lock(fence_mu_);
  if (fences_.size() >= 4096)
    std::erase_if(fences_, [&](const auto& f) { return now.at - f.second.at > kLongestRequest; });
  fences_[std::string(name)] = now;
}

BlobCache::Fenced CachingBlobStore::FencedSince(const Sent& sent) const {
  return [this, sent](std::string_view name) { return Fenced(name, sent); };
}

bool CachingBlobStore::Fenced(std::string_view name, const Sent& sent) const {
  std::lock_guard<std::mutex> lock(fence_mu_);
  auto it = fences_.find(std::string(name));
  return it != fences_.end() && it->second.seq > sent.seq;
}

CachedGet CachingBlobStore::Answer(CacheEntry entry, bool stale) {
  CachedGet r;
  r.result.properties = std::move(entry.properties);
  r.result.data = std::move(entry.data);
  r.stale = stale;
  if (stale) ++cache_->counters().stale;
  return r;
}

Result<CachedGet> CachingBlobStore::Read(std::string_view name, const CachedReadOptions& o) {
  const ReadPolicy& policy = o.policy;
  if (!Cacheable(name)) {
    if (policy.mode == ReadPolicy::Mode::kOffline)
      return Status::FromStorage(Code::kNotFound, 404, "BlobNotFound",
                                 "blob '" + std::string(name) + "' is never cached (offline)");
    ReadOptions ask;
    ask.deadline = o.deadline;
    BT_ASSIGN_OR_RETURN(GetResult got, BlobStoreWrapper::Get(name, ask));
    return CachedGet{std::move(got), false};
  }
  std::optional<CacheEntry> entry = cache_->Lookup(scope_, name);
  if (!entry) {
    if (policy.mode == ReadPolicy::Mode::kOffline)
      return Status::FromStorage(Code::kNotFound, 404, "BlobNotFound",
                                 "blob '" + std::string(name) + "' is not in the cache (offline)");
    return Fetch(name, o);
  }
  const uint64_t size = entry->data.size();
  const bool listed = !o.listed_etag.empty() && o.listed_etag == entry->properties.etag;
  // A listing that shows another ETag proves the copy old, however young.
  const bool outdated = !o.listed_etag.empty() && !listed;
  const bool young = policy.mode == ReadPolicy::Mode::kMaxStale && !outdated &&
                     o_.clock->Now() - entry->validated < policy.max_stale;
  if (listed || young) {
    ++cache_->counters().hits;
    cache_->counters().bytes_saved += size;
    return Answer(std::move(*entry), /*stale=*/false);
  }
  if (policy.mode == ReadPolicy::Mode::kOffline || (policy.stale_if_error && KnownUnreachable())) {
    ++cache_->counters().hits;
    return Answer(std::move(*entry), /*stale=*/true);
  }
  return Revalidate(name, o, std::move(*entry));
}

// A cached copy asked about with If-None-Match.
Result<CachedGet> CachingBlobStore::Revalidate(std::string_view name, const CachedReadOptions& o,
                                               CacheEntry entry) {
  ReadOptions ask;
  ask.conditions.if_none_match = entry.properties.etag;
  ask.deadline = DeadlineFor(o.policy, o.deadline);
  ask.has_fallback = o.policy.stale_if_error;
  const Sent sent = SendingNow();
  auto got = BlobStoreWrapper::Get(name, ask);
  if (got.ok()) Reachable();
  if (got.ok() && got->not_modified) {
    ++cache_->counters().not_modified;
    cache_->counters().bytes_saved += entry.data.size();
    if (!Fenced(name, sent)) cache_->Validated(scope_, name, entry.properties.etag, sent.at);
    return Answer(std::move(entry), /*stale=*/false);
  }
  if (got.ok()) {
    ++cache_->counters().changed;
    Keep(name, *got, sent);
    return CachedGet{*std::move(got), false};
  }
  if (got.status().IsNotFound()) {
    cache_->Evict(scope_, name, BlobCache::Source::kRead, sent.at, FencedSince(sent));
    return got.status();
  }
  if (got.status().IsUnavailable()) {
    Unreachable();
    if (o.policy.stale_if_error) return Answer(std::move(entry), /*stale=*/true);
  }
  return got.status();
}

// A blob not cached: read, and kept.
Result<CachedGet> CachingBlobStore::Fetch(std::string_view name, const CachedReadOptions& o) {
  if (o.policy.stale_if_error && KnownUnreachable())
    return Status::Unavailable("blob '" + std::string(name) +
                               "': storage was unreachable moments ago, and it is not cached");
  // With stale-if-error, a read storage does not answer by its deadline
  // is Unavailable then, cached or not: an outage costs seconds, not the
  // request timeout.
  ReadOptions ask;
  ask.deadline = DeadlineFor(o.policy, o.deadline);
  const Sent sent = SendingNow();
  auto got = BlobStoreWrapper::Get(name, ask);
  if (got.ok()) {
    Reachable();
    ++cache_->counters().misses;
    Keep(name, *got, sent);
    return CachedGet{*std::move(got), false};
  }
  if (got.status().IsUnavailable()) Unreachable();
  return got.status();
}

Result<WriteResult> CachingBlobStore::Put(std::string_view name, std::string_view data,
                                          const PutOptions& o) {
  const TimePoint sent = o_.clock->Now();
  auto put = BlobStoreWrapper::Put(name, data, o);
  NoteWrite(put.status());
  if (!Cacheable(name)) return put;
  Fence(name);
  if (put.ok())
    KeepOwnWrite(name, data, o.metadata, *put, sent);
  else
    cache_->Evict(scope_, name, BlobCache::Source::kOwnWrite);
  return put;
}

void CachingBlobStore::KeepOwnWrite(std::string_view name, std::string_view data,
                                    const Metadata& metadata, const WriteResult& written,
                                    TimePoint sent) {
  CacheEntry e;
  e.name = std::string(name);
  e.properties.etag = written.etag;
  e.properties.last_modified = written.last_modified;
  e.properties.content_length = data.size();
  e.properties.metadata = metadata;
  e.data = std::string(data);
  e.validated = sent;           // its age: from when it was sent
  e.ordered = o_.clock->Now();  // applied by its acknowledgement
  cache_->Put(scope_, e, BlobCache::Source::kOwnWrite);
}

Status CachingBlobStore::Delete(std::string_view name, const WriteOptions& o) {
  Status s = BlobStoreWrapper::Delete(name, o);
  NoteWrite(s);
  if (Cacheable(name)) {
    Fence(name);
    cache_->Evict(scope_, name, BlobCache::Source::kOwnWrite);
  }
  return s;
}

BatchResult CachingBlobStore::CommitBatch(const std::vector<BatchOp>& ops) {
  const TimePoint sent = o_.clock->Now();
  BatchResult done = BlobStoreWrapper::CommitBatch(ops);
  for (size_t k = 0; k < ops.size(); ++k) {
    const BatchOp& op = ops[k];
    if (op.kind == BatchOp::Kind::kCheck || !Cacheable(op.blob)) continue;
    Fence(op.blob);
    if (done.status.ok() && op.kind == BatchOp::Kind::kPut && k < done.writes.size())
      KeepOwnWrite(op.blob, op.data, op.metadata, done.writes[k], sent);
    else
      cache_->Evict(scope_, op.blob, BlobCache::Source::kOwnWrite);
  }
  return done;
}

Result<WriteResult> CachingBlobStore::SetMetadata(std::string_view name, const Metadata& m,
                                                  const WriteOptions& o) {
  const TimePoint sent = o_.clock->Now();
  auto set = BlobStoreWrapper::SetMetadata(name, m, o);
  NoteWrite(set.status());
  if (!Cacheable(name)) return set;
  Fence(name);
  std::optional<CacheEntry> entry = set.ok() ? cache_->Lookup(scope_, name) : std::nullopt;
  // Only a copy the write was conditioned on is known to be the version it
  // changed; any other is dropped.
  if (!entry || !o.conditions.if_match || *o.conditions.if_match != entry->properties.etag) {
    cache_->Evict(scope_, name, BlobCache::Source::kOwnWrite);
    return set;
  }
  entry->properties.etag = set->etag;
  entry->properties.last_modified = set->last_modified;
  entry->properties.metadata = m;
  entry->validated = sent;
  entry->ordered = o_.clock->Now();
  cache_->Put(scope_, *entry, BlobCache::Source::kOwnWrite);
  return set;
}

Result<ListPage> CachingBlobStore::List(const ListOptions& o) {
  return ListAndSync(o, o.has_fallback);
}

Result<CachedList> CachingBlobStore::ListCached(const ListOptions& o, const ReadPolicy& policy) {
  const bool fallback = policy.stale_if_error;
  if (policy.mode == ReadPolicy::Mode::kOffline) {
    ++cache_->counters().stale;
    return CachedRange(o);
  }
  if (fallback && KnownUnreachable())
    return CachedRangeIfSeen(o, Status::Unavailable("storage was unreachable moments ago"));
  ListOptions ask = o;
  ask.deadline = DeadlineFor(policy, o.deadline);
  auto page = ListAndSync(ask, o.has_fallback || fallback);
  if (page.ok()) return CachedList{*std::move(page), false};
  if (fallback && page.status().IsUnavailable()) return CachedRangeIfSeen(o, page.status());
  return page.status();
}

Result<ListPage> CachingBlobStore::ListAndSync(const ListOptions& o, bool has_fallback) {
  ListOptions ask = o;
  ask.has_fallback = has_fallback;
  ask.include_data = false;  // see traits()
  const Sent sent = SendingNow();
  auto page = BlobStoreWrapper::List(ask);
  if (page.ok()) {
    Reachable();
    SyncListedRange(o, *page, sent);
    // Known only when listed whole: from its start to its end in one page
    // (a range of more rows than a page is never answered stale).
    if (o.marker.empty() && o.start_from <= o.prefix && page->next_marker.empty()) {
      std::vector<std::string> names;
      names.reserve(page->items.size());
      for (const BlobItem& item : page->items) names.push_back(item.name);
      cache_->SawRange(scope_, o.prefix, names);
    }
  } else if (page.status().IsUnavailable()) {
    Unreachable();
  }
  return page;
}

// stale-if-error answers only from what the cache knows: a range it never
// listed (another account's, a table never queried here) would answer
// "empty" for rows it never saw, and one with a row listed but not held
// (damaged, too large to keep, never read) would answer without it. Such a
// range is forgotten and Unavailable.
Result<CachedList> CachingBlobStore::CachedRangeIfSeen(const ListOptions& o, const Status& why) {
  const std::string ctx = "listing '" + o.prefix + "': storage is unreachable (" + why.message();
  auto listed = cache_->KnownRange(scope_, o.prefix);
  if (!listed) return Status::Unavailable(ctx + "), and this range was never listed into the cache");
  CachedList cached = CachedRange(o);
  std::set<std::string_view> held;
  for (const BlobItem& item : cached.page.items) held.insert(item.name);
  for (const std::string& name : *listed) {
    const bool in_range = name.compare(0, o.prefix.size(), o.prefix) == 0 &&
                          name >= o.start_from && (o.marker.empty() || name > o.marker);
    if (!in_range || held.count(name) != 0) continue;
    cache_->ForgetRangesHolding(scope_, name);
    return Status::Unavailable(ctx + "), and the cache does not hold every row of this range (" +
                               name + " is damaged, too large to keep, or was never read)");
  }
  ++cache_->counters().stale;
  return cached;
}

// The cached entries of a listing's range, as one page marked stale.
CachedList CachingBlobStore::CachedRange(const ListOptions& o) {
  CachedList cached;
  cached.stale = true;
  for (CacheEntry& e : cache_->Range(scope_, o.prefix, o.start_from)) {
    if (!o.marker.empty() && e.name <= o.marker) continue;
    cached.page.items.push_back(BlobItem{std::move(e.name), std::move(e.properties), std::nullopt});
  }
  return cached;
}

// Entries the listing shows changed (another ETag) or gone (absent from the
// range it covered) are evicted, and listed blobs whose bodies it carries
// inline are kept (in place of any older copy), in one cache write. The
// range covered: from the listing's start (or, after an opaque marker, its
// first name) to its last name, or to the end of the prefix on the last
// page.
void CachingBlobStore::SyncListedRange(const ListOptions& o, const ListPage& page,
                                       const Sent& sent) {
  if (!o.marker.empty() && page.items.empty()) return;
  const std::string from =
      o.marker.empty() ? std::max(o.prefix, o.start_from) : page.items.front().name;
  const bool to_end = page.next_marker.empty();
  std::map<std::string, std::string> cached;  // name -> ETag, in the covered range
  for (CacheEntry& e : cache_->Range(scope_, o.prefix, from, /*with_data=*/false)) {
    if (!to_end && !page.items.empty() && e.name > page.items.back().name) break;
    cached.emplace(std::move(e.name), std::move(e.properties.etag));
  }
  std::vector<CacheEntry> keep;
  std::vector<std::string> drop;
  for (const BlobItem& item : page.items) {
    auto it = cached.find(item.name);
    const bool was_cached = it != cached.end();
    const bool current = was_cached && it->second == item.properties.etag;
    if (was_cached) cached.erase(it);  // what stays in `cached` is gone
    if (current) continue;
    std::optional<std::string> body =
        Cacheable(item.name) ? InlineBody(item.properties) : std::nullopt;
    if (!body) {
      if (was_cached) drop.push_back(item.name);  // changed
      continue;
    }
    CacheEntry e{item.name, {}, std::move(*body), sent.at, sent.at};  // replaces an older copy
    e.properties.etag = item.properties.etag;
    e.properties.last_modified = item.properties.last_modified;
    e.properties.content_length = item.properties.content_length;
    e.properties.content_md5 = item.properties.content_md5;
    e.properties.metadata = item.properties.metadata;
    keep.push_back(std::move(e));
  }
  for (auto& [name, etag] : cached) drop.push_back(name);
  // Names this process wrote since the listing was sent are left alone,
  // asked inside the cache's write (FencedSince).
  cache_->Update(scope_, keep, drop, sent.at, FencedSince(sent));
}

}  // namespace blobtable::internal
