// SPDX-License-Identifier: Apache-2.0
// The C API: lock, work queue and counter (include/blobtable/c.h,
// docs/coordination.md).
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "bindings/c/c_handles.h"

struct blobtable_lock {
  std::shared_ptr<const blobtable::Store> store;  // outlives the lock, which renews through it
  std::unique_ptr<blobtable::Lock> lock;
};
struct blobtable_queue {
  std::shared_ptr<const blobtable::Store> store;
  blobtable::WorkQueue queue;
};
struct blobtable_counter {
  std::shared_ptr<const blobtable::Store> store;
  blobtable::Counter counter;
};
struct blobtable_queue_item {
  blobtable::QueueItem item;
  std::string queue;  // the queue it was taken from
};

namespace blobtable::internal::c_api {
namespace {

// The queue and item a call on a taken item names: the item's own queue
// (another's would look for it under its own name and find it gone).
blobtable_code ItemCall(blobtable_queue* queue, blobtable_queue_item* item) {
  if (queue == nullptr) return NullArgument("queue");
  if (item == nullptr) return NullArgument("item");
  if (item->queue != queue->queue.name())
    return Invalid("the item was taken from queue '" + item->queue + "', not '" +
                   queue->queue.name() + "'");
  return BLOBTABLE_OK;
}

}  // namespace
}  // namespace blobtable::internal::c_api

using namespace blobtable::internal::c_api;  // NOLINT: the entry points below are C's
using blobtable::Status;

extern "C" {

blobtable_code blobtable_lock_acquire(blobtable_store* store, const char* name, size_t len,
                                      int64_t timeout_ms, blobtable_lock** out) {
  return Call([&] {
    std::string_view n;
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    if (store == nullptr) return NullArgument("store");
    if (!View(name, len, &n)) return BadString("name");
    blobtable::LockOptions options;
    if (timeout_ms >= 0) options.timeout = std::chrono::milliseconds(timeout_ms);
    auto lock = blobtable::Lock::Acquire(*store->store, n, options);
    if (!lock.ok()) return Record(lock.status());
    *out = new blobtable_lock{store->store, std::move(*lock)};
    return Ok();
  });
}

int64_t blobtable_lock_token(const blobtable_lock* lock) {
  return lock == nullptr ? 0 : lock->lock->token();
}

blobtable_code blobtable_lock_status(blobtable_lock* lock) {
  return Call([&] {
    if (lock == nullptr) return NullArgument("lock");
    if (lock->lock->held()) return Ok();
    Status why = lock->lock->status();
    if (!why.ok()) return Record(why);
    return Record(Status::LeaseLost("lock '" + lock->lock->name() +
                                    "' is not held: released, or its lease ran out"));
  });
}

blobtable_code blobtable_lock_release(blobtable_lock* lock) {
  return Call([&] {
    if (lock == nullptr) return NullArgument("lock");
    return Record(lock->lock->Release());
  });
}

void blobtable_lock_free(blobtable_lock* lock) { delete lock; }  // ~Lock releases

blobtable_code blobtable_queue_open(blobtable_store* store, const char* name, size_t len,
                                    int visibility_seconds, blobtable_queue** out) {
  return Call([&] {
    std::string_view n;
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    if (store == nullptr) return NullArgument("store");
    if (!View(name, len, &n)) return BadString("name");
    blobtable::QueueOptions options;
    if (visibility_seconds != 0) options.visibility_seconds = visibility_seconds;
    auto queue = blobtable::WorkQueue::Open(*store->store, n, options);
    if (!queue.ok()) return Record(queue.status());
    *out = new blobtable_queue{store->store, std::move(*queue)};
    return Ok();
  });
}

void blobtable_queue_close(blobtable_queue* queue) { delete queue; }

blobtable_code blobtable_queue_put(blobtable_queue* queue, const void* body, size_t len,
                                   blobtable_strings** id) {
  return Call([&] {
    std::string_view b;
    if (id != nullptr) *id = nullptr;
    if (queue == nullptr) return NullArgument("queue");
    if (!View(static_cast<const char*>(body), len, &b)) return BadString("body");
    auto added = queue->queue.Enqueue(b);
    if (!added.ok()) return Record(added.status());
    if (id != nullptr) *id = new blobtable_strings{{std::move(*added)}};
    return Ok();
  });
}

blobtable_code blobtable_queue_take(blobtable_queue* queue, blobtable_queue_item** out) {
  return Call([&] {
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    if (queue == nullptr) return NullArgument("queue");
    auto taken = queue->queue.Dequeue();
    if (!taken.ok()) return Record(taken.status());
    if (taken->has_value())
      *out = new blobtable_queue_item{std::move(**taken), queue->queue.name()};
    return Ok();
  });
}

const char* blobtable_queue_item_id(const blobtable_queue_item* item, size_t* len) {
  static const std::string empty;
  return Out(item == nullptr ? empty : item->item.id, len);
}

const void* blobtable_queue_item_body(const blobtable_queue_item* item, size_t* len) {
  static const std::string empty;
  return Out(item == nullptr ? empty : item->item.body, len);
}

int blobtable_queue_item_dequeue_count(const blobtable_queue_item* item) {
  return item == nullptr ? 0 : item->item.dequeue_count;
}

blobtable_code blobtable_queue_complete(blobtable_queue* queue, blobtable_queue_item* item) {
  return Call([&] {
    if (blobtable_code c = ItemCall(queue, item); c != BLOBTABLE_OK) return c;
    return Record(queue->queue.Complete(item->item));
  });
}

blobtable_code blobtable_queue_abandon(blobtable_queue* queue, blobtable_queue_item* item) {
  return Call([&] {
    if (blobtable_code c = ItemCall(queue, item); c != BLOBTABLE_OK) return c;
    return Record(queue->queue.Abandon(item->item));
  });
}

blobtable_code blobtable_queue_extend(blobtable_queue* queue, blobtable_queue_item* item) {
  return Call([&] {
    if (blobtable_code c = ItemCall(queue, item); c != BLOBTABLE_OK) return c;
    return Record(queue->queue.Extend(&item->item));
  });
}

void blobtable_queue_item_free(blobtable_queue_item* item) { delete item; }

blobtable_code blobtable_counter_open(blobtable_store* store, const char* name, size_t len,
                                      blobtable_counter** out) {
  return Call([&] {
    std::string_view n;
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    if (store == nullptr) return NullArgument("store");
    if (!View(name, len, &n)) return BadString("name");
    auto counter = blobtable::Counter::Open(*store->store, n);
    if (!counter.ok()) return Record(counter.status());
    *out = new blobtable_counter{store->store, std::move(*counter)};
    return Ok();
  });
}

void blobtable_counter_close(blobtable_counter* counter) { delete counter; }

blobtable_code blobtable_counter_add(blobtable_counter* counter, int64_t delta, int64_t* value) {
  return Call([&] {
    if (counter == nullptr) return NullArgument("counter");
    auto sum = counter->counter.Add(delta);
    if (!sum.ok()) return Record(sum.status());
    if (value != nullptr) *value = *sum;
    return Ok();
  });
}

blobtable_code blobtable_counter_get(blobtable_counter* counter, int64_t* value) {
  return Call([&] {
    if (counter == nullptr) return NullArgument("counter");
    if (value == nullptr) return NullArgument("value");
    auto sum = counter->counter.Get();
    if (!sum.ok()) return Record(sum.status());
    *value = *sum;
    return Ok();
  });
}

}  // extern "C"
