// SPDX-License-Identifier: Apache-2.0
// Transactions counted (Store::Metrics, docs/observability.md#metrics): each
// commit by the path it took and its outcome, timed; waits for busy
// entities and locks; aborts.
#ifndef BLOBTABLE_TXN_TXN_METRICS_H_
#define BLOBTABLE_TXN_TXN_METRICS_H_

#include <array>
#include <chrono>

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

class TxnMetrics {
 public:
  explicit TxnMetrics(MetricsRegistry& registry);
  void Committed(CommitPath path, Code code, std::chrono::nanoseconds took, int lock_waits);
  void Aborted() { aborts_->Add(); }

 private:
  std::array<CountersByCode, kCommitPaths> commits_{};
  std::array<LatencyHistogram*, kCommitPaths> latency_{};
  Counter* lock_waits_;
  Counter* aborts_;
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_TXN_METRICS_H_
