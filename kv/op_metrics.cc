// SPDX-License-Identifier: Apache-2.0
#include "kv/op_metrics.h"

#include <string>

#include "util/metric_catalog.h"

namespace blobtable::internal {

const char* OpName(OpKind op) {
  static constexpr const char* kNames[kOpKinds] = {
      "get",          "insert", "replace", "merge",       "upsert",
      "upsert_merge", "delete", "query",   "index_query", "update"};
  return kNames[static_cast<int>(op)];
}

OpMetrics::OpMetrics(MetricsRegistry& registry)
    : rows_returned_(&registry.AddCounter(metric::kRowsReturned)),
      rows_scanned_(&registry.AddCounter(metric::kRowsScanned)) {
  for (int op = 0; op < kOpKinds; ++op) {
    calls_[op] =
        AddCountersByCode(registry, metric::kOperations, {{"op", OpName(static_cast<OpKind>(op))}});
    latency_[op] = &registry.AddHistogram(metric::kOperationSeconds,
                                          {{"op", OpName(static_cast<OpKind>(op))}});
  }
}

CoordMetrics::CoordMetrics(MetricsRegistry& registry)
    : locks_lost_(&registry.AddCounter(metric::kLocksLost)),
      deliveries_(&registry.AddCounter(metric::kQueueDeliveries)),
      dead_letters_(&registry.AddCounter(metric::kQueueDeadLetters)),
      acquisitions_(AddCountersByCode(registry, metric::kLockAcquisitions)),
      completions_(AddCountersByCode(registry, metric::kQueueCompletions)) {}

}  // namespace blobtable::internal
