// SPDX-License-Identifier: Apache-2.0
// Counter: shards as small blobs, added to with ETag retries, summed by one
// listing (blobtable/counter.h).
#include "blobtable/counter.h"

#include <charconv>

#include "blobtable/store.h"
#include "coord/coord_names.h"
#include "kv/retry_loop.h"
#include "util/macros.h"
#include "util/random.h"

namespace blobtable {
namespace {

constexpr char kValueKey[] = "value";

Result<int64_t> Parse(std::string_view text, const std::string& blob) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    return Status::Corruption("counter shard '" + blob + "' holds '" + std::string(text) +
                              "', not a number");
  return v;
}

Result<int64_t> ValueOf(const BlobProperties& p, const std::string& blob) {
  auto it = p.metadata.find(kValueKey);
  if (it == p.metadata.end())
    return Status::Corruption("counter shard '" + blob + "' has no value");
  return Parse(it->second, blob);
}

}  // namespace

Result<Counter> Counter::Open(const Store& store, std::string_view name,
                              const CounterOptions& options) {
  BT_RETURN_IF_ERROR(internal::coord::ValidateName(name, "counter"));
  if (options.shards < 1 || options.shards > 64)
    return Status::InvalidArgument("CounterOptions::shards must be 1..64, got " +
                                   std::to_string(options.shards));
  BT_RETURN_IF_ERROR(ValidateRetryPolicy(options.retry));
  return Counter(&store, std::string(name), options);
}

Result<int64_t> Counter::Add(int64_t delta, int* attempts) const {
  const int shard =
      options_.shards == 1
          ? 0
          : static_cast<int>(internal::RandomU64() % static_cast<uint64_t>(options_.shards));
  const std::string blob = internal::coord::CounterShardName(name_, shard);
  BlobStore& blobs = store_->blob_store();
  const Clock* clock = store_->options().clock != nullptr ? store_->options().clock : Clock::Real();
  auto r =
      internal::WithRetries(*clock, options_.retry, attempts, [&](bool* final) -> Result<int64_t> {
        auto head = blobs.Head(blob, {});
        if (!head.ok() && !head.status().IsNotFound()) return head.status();
        int64_t now = 0;
        PutOptions put;
        if (head.ok()) {
          BT_ASSIGN_OR_RETURN(now, ValueOf(head->properties, blob));
          put.conditions.if_match = head->properties.etag;
        } else {
          put.conditions.if_none_match = std::string(kAnyETag);  // first add: create it
        }
        int64_t next = 0;
        if (__builtin_add_overflow(now, delta, &next)) {
          *final = true;
          return Status::InvalidArgument("counter " + name_ + ": adding " + std::to_string(delta) +
                                         " to " + std::to_string(now) + " overflows int64");
        }
        const std::string text = std::to_string(next);
        put.metadata[kValueKey] = text;
        auto written = blobs.Put(blob, text, put);
        if (!written.ok()) return written.status();  // Conflict: raced; again
        return next;
      });
  if (!r.ok()) return r.status().WithContext("counter " + name_);
  return r;
}

Result<int64_t> Counter::Get() const {
  ListOptions list;
  list.prefix = internal::coord::CounterPrefix(name_);
  int64_t total = 0;
  for (int pages = 0;;) {
    auto page = store_->blob_store().List(list);
    if (!page.ok()) return page.status().WithContext("counter " + name_);
    for (const BlobItem& item : page->items) {
      BT_ASSIGN_OR_RETURN(int64_t v, ValueOf(item.properties, item.name));
      if (__builtin_add_overflow(total, v, &total))
        return Status::InvalidArgument("counter " + name_ + ": its shards' sum overflows int64");
    }
    BT_ASSIGN_OR_RETURN(bool more, NextListPage(list, *page, &pages));
    if (!more) break;
  }
  return total;
}

}  // namespace blobtable
