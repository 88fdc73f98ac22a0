// SPDX-License-Identifier: Apache-2.0
// Counter: a number shared by every client of a store, added to with ETag
// retries, optionally sharded for hot counters.
//
//   auto visits = blobtable::Counter::Open(*store, "visits");
//   auto now = visits->Add(1);          // the new value
//   auto total = visits->Get();
//
// A counter is one blob a shard, c/counters/-<name>/<shard>
// (docs/coordination.md#coordination), whose value is its body and also its metadata, so that a
// listing of the counter's prefix reads every shard at once. Add picks a
// shard (at random when there are several), reads it (HEAD) and writes it
// back If-Match the ETag read, retrying a lost race under the RetryPolicy:
// one HEAD and one PUT when nobody races. Get is one listing, whatever the
// number of shards, and counts every shard it finds: clients that open the
// same counter with different shard counts still agree on its total.
//
// Thread-safety: a Counter is a cheap value; use it from any thread. The
// store must outlive it.
#ifndef BLOBTABLE_COUNTER_H_
#define BLOBTABLE_COUNTER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "blobtable/export.h"
#include "blobtable/retry.h"
#include "blobtable/status.h"

namespace blobtable {

class Store;

struct CounterOptions {
  // 1..64 shard blobs. More shards: more writers at once without racing
  // (each Add touches one), at no extra cost for Get.
  int shards = 1;
  RetryPolicy retry;
};

class BLOBTABLE_EXPORT Counter {
 public:
  // A handle on counter `name` (1..256 bytes of UTF-8); sends nothing.
  // InvalidArgument for a bad name or options.
  static Result<Counter> Open(const Store& store, std::string_view name,
                              const CounterOptions& options = {});

  // Adds `delta` (negative subtracts). Returns the value of the shard it
  // went to afterwards: with one shard, the counter's new value. Conflict
  // after the policy's attempts; InvalidArgument if the shard would
  // overflow int64; Corruption if a shard's value is not a number.
  // `attempts` (optional) receives how many writes it took.
  Result<int64_t> Add(int64_t delta, int* attempts = nullptr) const;
  // The sum of every shard (0 for a counter never added to).
  Result<int64_t> Get() const;

  const std::string& name() const { return name_; }
  int shards() const { return options_.shards; }

 private:
  Counter(const Store* store, std::string name, CounterOptions options)
      : store_(store), name_(std::move(name)), options_(std::move(options)) {}
  const Store* store_;
  std::string name_;
  CounterOptions options_;
};

}  // namespace blobtable

#endif  // BLOBTABLE_COUNTER_H_
