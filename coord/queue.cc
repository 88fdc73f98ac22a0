// SPDX-License-Identifier: Apache-2.0
// WorkQueue: items as leased blobs (blobtable/queue.h).
#include "blobtable/queue.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "blobtable/store.h"
#include "kv/op_metrics.h"
#include "coord/coord_names.h"
#include "coord/lease_time.h"
#include "util/macros.h"
#include "util/random.h"

namespace blobtable {
namespace {

constexpr char kCountKey[] = "dequeues";
constexpr size_t kMaxBody = 4 << 20;

int CountOf(const BlobProperties& p) {
  auto it = p.metadata.find(kCountKey);
  int n = 0;
  if (it != p.metadata.end())
    std::from_chars(it->second.data(), it->second.data() + it->second.size(), n);
  return n;
}

// Ids sort by enqueue time (milliseconds, zero-padded), then at random.
std::string NewId(const Clock& clock) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now().time_since_epoch()).count();
  char buf[48];
  std::snprintf(buf, sizeof buf, "%015lld-%016llx", static_cast<long long>(ms),
                static_cast<unsigned long long>(internal::RandomU64()));
  return buf;
}

bool Taken(const BlobProperties& p) { return p.lease_state == LeaseState::kLeased; }

// After a raise of the count from `before` that failed: what it did, read
// back (the blob still leased: by this delivery, which holds the lease, so
// nobody else raised it). Raised, with this delivery's lease still usable:
// the delivery has happened as far as storage knows, and is made (a count
// is never raised without an item handed out).
enum class CountSeen { kRaised, kAsItWas, kUnknown };
CountSeen CountAfterFailure(BlobStore& blobs, const std::string& blob, int before) {
  auto head = blobs.Head(blob, {});
  if (!head.ok() || !Taken(head->properties)) return CountSeen::kUnknown;
  const int now = CountOf(head->properties);
  return now == before + 1 ? CountSeen::kRaised
         : now == before   ? CountSeen::kAsItWas
                           : CountSeen::kUnknown;
}

const Clock& ClockOf(const Store& store) {
  return store.options().clock ? *store.options().clock : *Clock::Real();
}

// LeaseLost, without a request, once a delivery's lease may have run out by
// this worker's clock.
Status UsableNow(const Clock& clock, const QueueItem& item, const std::string& ctx) {
  if (!item.lease_usable_until || clock.Steady() < *item.lease_usable_until) return Status::OK();
  return Status::LeaseLost(ctx +
                           ": this delivery's lease may have run out by this worker's "
                           "clock (Extend it sooner); the item will be delivered again");
}

}  // namespace

Result<WorkQueue> WorkQueue::Open(const Store& store, std::string_view name,
                                  const QueueOptions& o) {
  BT_RETURN_IF_ERROR(internal::coord::ValidateName(name, "queue"));
  if (o.visibility_seconds < 15 || o.visibility_seconds > 60)
    return Status::InvalidArgument("QueueOptions::visibility_seconds must be 15..60, got " +
                                   std::to_string(o.visibility_seconds));
  if (o.max_dequeues < 1) return Status::InvalidArgument("QueueOptions::max_dequeues must be >= 1");
  if (o.list_page < 1 || o.list_page > 1000 || o.spread < 1 || o.spread > o.list_page)
    return Status::InvalidArgument("QueueOptions: need 1 <= spread <= list_page <= 1000");
  return WorkQueue(&store, std::string(name), o);
}

Result<std::string> WorkQueue::Enqueue(std::string_view body) const {
  if (body.size() > kMaxBody)
    return Status::InvalidArgument("queue " + name_ + ": an item's body is at most 4 MiB");
  const std::string id = NewId(ClockOf(*store_));
  PutOptions put;
  put.conditions.if_none_match = std::string(kAnyETag);  // created once, never overwritten
  put.metadata[kCountKey] = "0";
  auto r = store_->blob_store().Put(internal::coord::QueueItemName(name_, id), body, put);
  if (!r.ok()) return r.status().WithContext("queue " + name_ + ": enqueue");
  return id;
}

Result<std::optional<QueueItem>> WorkQueue::Take(const std::string& id) const {
  BlobStore& blobs = store_->blob_store();
  const std::string blob = internal::coord::QueueItemName(name_, id);
  const std::string lease_id = internal::NewGuid();
  const SteadyTime usable_until =
      ClockOf(*store_).Steady() + internal::coord::UsableFor(options_.visibility_seconds);
  auto lease = blobs.AcquireLease(blob, options_.visibility_seconds, lease_id, {});
  if (lease.status().IsBusy() || lease.status().IsNotFound()) return std::optional<QueueItem>();
  if (!lease.ok()) return lease.status();
  // From here a delivery that fails gives the lease back: the item is
  // visible again at once instead of hidden for the visibility by a
  // delivery that never happened (best effort: if the release is lost
  // too, the lease runs out by itself).
  LeaseOptions within;
  within.deadline = usable_until;
  auto give_back = [&](const Status& why) {
    (void)blobs.ReleaseLease(blob, lease_id, within);
    return why;
  };
  auto got = blobs.Get(blob, ReadOptions{});
  if (got.status().IsNotFound()) return std::optional<QueueItem>();
  if (!got.ok()) return give_back(got.status());
  WriteOptions under_lease;
  under_lease.lease_id = lease_id;
  under_lease.deadline = usable_until;
  const int before = CountOf(got->properties);
  if (before >= options_.max_dequeues) {
    // A poison item: to the dead letters (a copy made once), then gone.
    PutOptions dead;
    dead.conditions.if_none_match = std::string(kAnyETag);
    dead.metadata[kCountKey] = std::to_string(before);
    Status copied = blobs.Put(internal::coord::QueueDeadName(name_, id), got->data, dead).status();
    if (!copied.ok() && !copied.IsConflict()) return give_back(copied);
    Status removed = blobs.Delete(blob, under_lease);
    // Gone is what was wanted, whoever removed it (a delete under a lease
    // whose answer was lost is OutcomeUnknown).
    if (removed.IsOutcomeUnknown() && blobs.Head(blob, {}).status().IsNotFound())
      removed = Status::OK();
    if (!removed.ok() && !removed.IsNotFound()) return give_back(removed);
    if (copied.ok()) store_->coord_metrics().dead_letters().Add();  // the one copy's maker
    return std::optional<QueueItem>();
  }
  under_lease.conditions.if_match = got->properties.etag;
  Status counted =
      blobs.SetMetadata(blob, {{kCountKey, std::to_string(before + 1)}}, under_lease).status();
  if (counted.IsLeaseLost() || counted.IsConflict()) return std::optional<QueueItem>();
  if (!counted.ok()) {
    // Seen not applied: the take did nothing, whatever the failure said (a
    // connection reset mid-request is OutcomeUnknown), once given back.
    const CountSeen seen = CountAfterFailure(blobs, blob, before);
    if (seen != CountSeen::kRaised || ClockOf(*store_).Steady() >= usable_until) {
      if (seen == CountSeen::kAsItWas && counted.IsOutcomeUnknown())
        counted = Status::Unavailable(counted.message() +
                                      " (read back: not applied; the item is given back)");
      if (seen == CountSeen::kRaised)  // too late to deliver: a count without a delivery
        counted = Status::OutcomeUnknown(
            counted.message() +
            " (read back: applied, but the lease ran out by this worker's clock first: counted, "
            "not delivered; the item is visible again when its lease runs out)");
      return give_back(counted);
    }
  }
  return std::optional<QueueItem>(
      QueueItem{id, std::move(got->data), before + 1, lease_id, usable_until});
}

Result<std::optional<QueueItem>> WorkQueue::Dequeue() const {
  const std::string ctx = "queue " + name_ + ": dequeue";
  ListOptions list;
  list.prefix = internal::coord::QueueItemPrefix(name_);
  list.max_results = options_.list_page;
  for (int pages = 0;;) {
    auto page = store_->blob_store().List(list);
    if (!page.ok()) return page.status().WithContext(ctx);
    std::vector<std::string> visible;
    for (const BlobItem& item : page->items)
      if (!Taken(item.properties)) visible.push_back(item.name.substr(list.prefix.size()));
    // At random among the first few visible items: workers spread over
    // them instead of all racing for the oldest.
    while (!visible.empty()) {
      const size_t among = std::min(visible.size(), static_cast<size_t>(options_.spread));
      const size_t pick = static_cast<size_t>(internal::RandomU64() % among);
      auto taken = Take(visible[pick]);
      if (!taken.ok()) return taken.status().WithContext(ctx);
      if (*taken) {
        store_->coord_metrics().deliveries().Add();
        return taken;
      }
      visible.erase(visible.begin() + static_cast<std::ptrdiff_t>(pick));
    }
    auto next = NextListPage(list, *page, &pages);
    if (!next.ok()) return next.status().WithContext(ctx);
    if (!*next) return std::optional<QueueItem>();
  }
}

Status WorkQueue::Complete(const QueueItem& item) const {
  Status completed = [&]() -> Status {
    const std::string ctx = "queue " + name_ + ", item " + item.id;
    BT_RETURN_IF_ERROR(UsableNow(ClockOf(*store_), item, ctx));
    WriteOptions under_lease;
    under_lease.lease_id = item.lease_id;
    under_lease.deadline = item.lease_usable_until;
    Status s =
        store_->blob_store().Delete(internal::coord::QueueItemName(name_, item.id), under_lease);
    if (s.ok()) return s;
    if (s.IsNotFound())
      return Status::NotFound(ctx +
                              ": gone: completed already (by an earlier call, or by another "
                              "worker after this delivery's lease ran out)");
    if (s.IsLeaseLost() || s.IsBusy() || s.IsConflict())
      return Status::LeaseLost(ctx +
                               ": this delivery's lease ran out; the item will be (or was) "
                               "delivered again: " +
                               s.ToString());
    if (s.IsOutcomeUnknown())
      return Status::OutcomeUnknown(ctx +
                                    ": whether this call completed the item is not known "
                                    "(if it did not, the item will be delivered again): " +
                                    s.message());
    return s.WithContext(ctx);
  }();
  store_->coord_metrics().Completed(completed.code());
  return completed;
}

Status WorkQueue::Abandon(const QueueItem& item) const {
  // Nobody waits on it past the lease, after which it needs no giving back.
  if (!UsableNow(ClockOf(*store_), item, "").ok()) return Status::OK();
  LeaseOptions within;
  within.deadline = item.lease_usable_until;
  auto r = store_->blob_store().ReleaseLease(internal::coord::QueueItemName(name_, item.id),
                                             item.lease_id, within);
  if (r.ok() || r.status().IsLeaseLost() || r.status().IsNotFound() || r.status().IsBusy() ||
      r.status().IsConflict())
    return Status::OK();
  return r.status().WithContext("queue " + name_ + ", item " + item.id + ": abandon");
}

Status WorkQueue::Extend(QueueItem* item) const {
  const std::string ctx = "queue " + name_ + ", item " + item->id + ": extend";
  const Clock& clock = ClockOf(*store_);
  BT_RETURN_IF_ERROR(UsableNow(clock, *item, ctx));
  // Answered within the lease this worker counts on, or Unavailable.
  LeaseOptions within;
  within.deadline = item->lease_usable_until;
  const SteadyTime sent = clock.Steady();
  auto r = store_->blob_store().RenewLease(internal::coord::QueueItemName(name_, item->id),
                                           item->lease_id, within);
  if (r.ok()) {
    if (item->lease_usable_until)
      item->lease_usable_until = sent + internal::coord::UsableFor(options_.visibility_seconds);
    return Status::OK();
  }
  if (r.status().IsNotFound() || r.status().IsBusy() || r.status().IsConflict() ||
      r.status().IsLeaseLost())
    return Status::LeaseLost(ctx + ": " + r.status().ToString());
  return r.status().WithContext(ctx);
}

Result<std::vector<QueueEntry>> WorkQueue::ListPrefix(const std::string& prefix, int max) const {
  ListOptions list;
  list.prefix = prefix;
  list.max_results = std::clamp(max, 1, 5000);
  std::vector<QueueEntry> out;
  for (int pages = 0; static_cast<int>(out.size()) < max;) {
    auto page = store_->blob_store().List(list);
    if (!page.ok()) return page.status().WithContext("queue " + name_ + ": list");
    for (const BlobItem& item : page->items) {
      if (static_cast<int>(out.size()) >= max) break;
      out.push_back(
          {item.name.substr(prefix.size()), CountOf(item.properties), Taken(item.properties)});
    }
    BT_ASSIGN_OR_RETURN(bool more, NextListPage(list, *page, &pages));
    if (!more) break;
  }
  return out;
}

Result<std::vector<QueueEntry>> WorkQueue::List(int max) const {
  return ListPrefix(internal::coord::QueueItemPrefix(name_), max);
}

Result<std::vector<QueueEntry>> WorkQueue::DeadLetters(int max) const {
  return ListPrefix(internal::coord::QueueDeadPrefix(name_), max);
}

}  // namespace blobtable
