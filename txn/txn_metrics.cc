// SPDX-License-Identifier: Apache-2.0
#include "txn/txn_metrics.h"

#include <string>

#include "util/metric_catalog.h"

namespace blobtable::internal {

TxnMetrics::TxnMetrics(MetricsRegistry& registry)
    : lock_waits_(&registry.AddCounter(metric::kTxnLockWaits)),
      aborts_(&registry.AddCounter(metric::kTxnAborts)) {
  static constexpr const char* kPaths[kCommitPaths] = {"none", "read_only", "atomic",
                                                       "coordinator"};
  for (int p = 0; p < kCommitPaths; ++p) {
    commits_[p] = AddCountersByCode(registry, metric::kTxnCommits, {{"path", kPaths[p]}});
    latency_[p] = &registry.AddHistogram(metric::kTxnCommitSeconds, {{"path", kPaths[p]}});
  }
}

void TxnMetrics::Committed(CommitPath path, Code code, std::chrono::nanoseconds took,
                           int lock_waits) {
  commits_[static_cast<int>(path)][static_cast<int>(code)]->Add();
  latency_[static_cast<int>(path)]->Record(took);
  if (lock_waits > 0) lock_waits_->Add(static_cast<uint64_t>(lock_waits));
}

}  // namespace blobtable::internal
