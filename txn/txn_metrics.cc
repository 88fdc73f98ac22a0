// SPDX-License-Identifier: Apache-2.0
#include "txn/txn_metrics.h"

#include <string>

#include "util/metric_catalog.h"

namespace blobtable::internal {

TxnMetrics::TxnMetrics(MetricsRegistry& registry)
    : lock_waits_(&registry.AddCounter(metric::kTxnLockWaits)),
      lock_wait_ns_(&registry.AddCounter(metric::kTxnLockWaitSeconds)),
      aborts_(&registry.AddCounter(metric::kTxnAborts)) {
  static constexpr const char* kPaths[kCommitPaths] = {"none", "read_only", "atomic",
                                                       "coordinator"};
  for (int p = 0; p < kCommitPaths; ++p) {
    commits_[p] = AddCountersByCode(registry, metric::kTxnCommits, {{"path", kPaths[p]}});
    latency_[p] = &registry.AddHistogram(metric::kTxnCommitSeconds, {{"path", kPaths[p]}});
    rounds_[p] = &registry.AddCounter(metric::kTxnCommitRounds, {{"path", kPaths[p]}});
    requests_[p] = &registry.AddCounter(metric::kTxnCommitRequests, {{"path", kPaths[p]}});
  }
}

void TxnMetrics::Committed(CommitPath path, Code code, std::chrono::nanoseconds took,
                           int lock_waits, int rounds, uint64_t requests) {
  const int p = static_cast<int>(path);
  commits_[p][static_cast<int>(code)]->Add();
  latency_[p]->Record(took);
  if (rounds > 0) rounds_[p]->Add(static_cast<uint64_t>(rounds));
  if (requests > 0) requests_[p]->Add(requests);
  if (lock_waits > 0) lock_waits_->Add(static_cast<uint64_t>(lock_waits));
}

CommitsInFlight::Entry::Entry(CommitsInFlight& set, SteadyTime since) : set_(set) {
  std::lock_guard<std::mutex> lock(set_.mu_);
  it_ = set_.since_.insert(since);
}

CommitsInFlight::Entry::~Entry() {
  std::lock_guard<std::mutex> lock(set_.mu_);
  set_.since_.erase(it_);
}

size_t CommitsInFlight::count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return since_.size();
}

std::optional<SteadyTime> CommitsInFlight::oldest() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (since_.empty()) return std::nullopt;
  return *since_.begin();
}

}  // namespace blobtable::internal
