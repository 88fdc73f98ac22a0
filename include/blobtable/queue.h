// SPDX-License-Identifier: Apache-2.0
// WorkQueue: items taken under a lease (the visibility timeout), completed
// exactly once, delivered at least once, with poison handling.
//
//   auto q = blobtable::WorkQueue::Open(*store, "thumbnails");
//   auto id = q->Enqueue("photo-17.jpg");
//   auto item = q->Dequeue();                 // nullopt: nothing visible now
//   if (item.ok() && *item) {
//     ... work on (*item)->body ...
//     Status done = q->Complete(**item);      // LeaseLost: it timed out and went to another
//   }
//
// Each item is a blob c/queues/-<name>/i/<id> (docs/coordination.md#coordination),
// created once (If-None-Match *), ids ordered by enqueue time so that older
// items come first. Dequeue lists one page of the queue (not the whole
// queue), picks at random among the first visible items (so that workers
// do not all race for the oldest), and takes its lease: the item is
// invisible to other workers until the lease (visibility_seconds, 15..60)
// runs out, is extended, or is given back (Abandon). Its dequeue count is
// raised under the lease; an item taken more than max_dequeues times is
// moved to c/queues/-<name>/d/<id> (the dead letters) instead of delivered.
// Complete deletes the item under its lease: exactly one worker completes
// an item; a worker whose lease ran out (and the item went to another)
// gets LeaseLost and must not count it as done. No request of a delivery
// outlives its lease by the worker's own monotonic clock, and a Complete
// whose answer was lost is OutcomeUnknown, never a guessed OK: two calls
// that say OK never complete the same item.
//
// Thread-safety: a WorkQueue is a cheap handle; use it from any thread. The
// store must outlive it. Nothing runs in the background: extending a long
// task's lease is the worker's call (Extend).
#ifndef BLOBTABLE_QUEUE_H_
#define BLOBTABLE_QUEUE_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/export.h"
#include "blobtable/options.h"
#include "blobtable/status.h"

namespace blobtable {

class Store;

struct QueueOptions {
  // How long a dequeued item stays invisible to other workers: 15..60 s
  // (a blob lease). Extend() restarts it.
  int visibility_seconds = 30;
  // An item dequeued this many times and not completed is a poison item:
  // the next Dequeue moves it to the dead letters (>= 1).
  int max_dequeues = 5;
  // Items one Dequeue lists, and how many of the first visible ones it
  // picks among (1..1000, <= list_page).
  int list_page = 64;
  int spread = 8;
};

struct QueueItem {
  std::string id;
  std::string body;
  int dequeue_count = 0;  // this delivery included
  std::string lease_id;   // the handle of this delivery
  // Until when, by the store clock's Steady(), this worker may count on the
  // delivery's lease: from the send time of the request that took (or last
  // extended) it, the visibility timeout less a tenth (at least a second).
  // Complete and Extend send nothing after it (LeaseLost), and cut their
  // request short to end by it. Unset (an item rebuilt from its id and
  // lease, as `blobtable queue done` does): no such bound, and the lease id
  // alone keeps a late Complete from counting. Extend updates the item it
  // is given: extend and complete the same QueueItem (not a copy), and not
  // from two threads at once.
  std::optional<SteadyTime> lease_usable_until;
};

// What List shows of one item.
struct QueueEntry {
  std::string id;
  int dequeue_count = 0;
  bool taken = false;  // leased by a worker now
};

class BLOBTABLE_EXPORT WorkQueue {
 public:
  // A handle on queue `name` (1..256 bytes of UTF-8); sends nothing.
  static Result<WorkQueue> Open(const Store& store, std::string_view name,
                                const QueueOptions& options = {});

  // Adds an item (a body of at most 4 MiB); its id. One request.
  Result<std::string> Enqueue(std::string_view body) const;
  // Takes a visible item; nullopt if none is visible now. Typically four
  // requests (a listing of one page, the lease, the body, the count).
  Result<std::optional<QueueItem>> Dequeue() const;
  // Completes `item`: deletes it under its lease. LeaseLost if this
  // delivery's lease ran out, by storage's word or by this worker's clock
  // (item.lease_usable_until: then nothing is sent); the item is, or will
  // be, delivered again: do not count this work as done. NotFound if the
  // item is gone already (completed by an earlier call, or by another
  // worker after this lease ran out). OutcomeUnknown if an attempt's answer
  // was lost and a retry could not tell whether it was applied (the item
  // is completed by this call, or will be delivered again).
  Status Complete(const QueueItem& item) const;
  // Gives `item` back at once (visible to the next Dequeue). Idempotent.
  Status Abandon(const QueueItem& item) const;
  // Restarts the item's visibility timeout (and item->lease_usable_until).
  // LeaseLost if it ran out and another worker took it, or ran out by this
  // worker's clock (nothing is sent then).
  Status Extend(QueueItem* item) const;

  // The items (up to `max`, oldest first), and the dead letters.
  Result<std::vector<QueueEntry>> List(int max = 1000) const;
  Result<std::vector<QueueEntry>> DeadLetters(int max = 1000) const;

  const std::string& name() const { return name_; }

 private:
  WorkQueue(const Store* store, std::string name, QueueOptions options)
      : store_(store), name_(std::move(name)), options_(options) {}
  // Takes the lease of listed item `id`; nullopt if another worker got it
  // first or it was dead-lettered.
  Result<std::optional<QueueItem>> Take(const std::string& id) const;
  Result<std::vector<QueueEntry>> ListPrefix(const std::string& prefix, int max) const;
  const Store* store_;
  std::string name_;
  QueueOptions options_;
};

}  // namespace blobtable

#endif  // BLOBTABLE_QUEUE_H_
