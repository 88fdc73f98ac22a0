// SPDX-License-Identifier: Apache-2.0
// Transactions counted (Store::Metrics, docs/observability.md#metrics): each
// commit by the path it took and its outcome, timed; waits for busy
// entities and locks; aborts.
#ifndef BLOBTABLE_TXN_TXN_METRICS_H_
#define BLOBTABLE_TXN_TXN_METRICS_H_

#include <array>
#include <chrono>
#include <mutex>
#include <optional>
#include <set>

#include "blobtable/clock.h"
#include "blobtable/status.h"
#include "util/metrics.h"

namespace blobtable::internal {

enum class CommitPath : int {
  kNone,         // nothing to commit
  kReadOnly,     // proved by reading again (txn/read_only_commit.h)
  kAtomic,       // one atomic batch of the local store (txn/atomic_commit.h)
  kCoordinator,  // the lease coordinator's protocol (txn/prewrite_commit.h)
};
inline constexpr int kCommitPaths = 4;

// The commits running now in a store (Store::Health): how many, and since
// when the oldest; thread-safe.
class CommitsInFlight {
 public:
  // Counted from construction to destruction.
  class Entry {
   public:
    Entry(CommitsInFlight& set, SteadyTime since);
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;
    ~Entry();

   private:
    CommitsInFlight& set_;
    std::multiset<SteadyTime>::iterator it_;
  };
  size_t count() const;
  std::optional<SteadyTime> oldest() const;

 private:
  mutable std::mutex mu_;
  std::multiset<SteadyTime> since_;
};

class TxnMetrics {
 public:
  explicit TxnMetrics(MetricsRegistry& registry);
  // A commit's answer, with its protocol rounds and storage requests.
  void Committed(CommitPath path, Code code, std::chrono::nanoseconds took, int lock_waits,
                 int rounds, uint64_t requests);
  void Aborted() { aborts_->Add(); }
  // A wait for something busy (a lock, an entity a transaction holds).
  void Waited(std::chrono::nanoseconds d) { lock_wait_ns_->Add(static_cast<uint64_t>(d.count())); }

 private:
  std::array<CountersByCode, kCommitPaths> commits_{};
  std::array<LatencyHistogram*, kCommitPaths> latency_{};
  std::array<Counter*, kCommitPaths> rounds_{}, requests_{};
  Counter* lock_waits_;
  Counter* lock_wait_ns_;
  Counter* aborts_;
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_TXN_METRICS_H_
