// SPDX-License-Identifier: Apache-2.0
// RetryPolicy's rules (blobtable/retry.h); its backoff is util/backoff.h.
#include "blobtable/retry.h"

#include <string>

namespace blobtable {

Status ValidateRetryPolicy(const RetryPolicy& p) {
  using std::chrono::milliseconds;
  auto bad = [](const std::string& what) {
    return Status::InvalidArgument("RetryPolicy::" + what);
  };
  if (p.max_attempts < 1 || p.max_attempts > 1000)
    return bad("max_attempts must be 1..1000, got " + std::to_string(p.max_attempts));
  if (p.initial_delay < milliseconds(0)) return bad("initial_delay must not be negative");
  if (p.max_delay < p.initial_delay)
    return bad("max_delay (" + std::to_string(p.max_delay.count()) +
               " ms) must not be shorter than initial_delay (" +
               std::to_string(p.initial_delay.count()) + " ms)");
  if (p.max_total < milliseconds(0)) return bad("max_total must not be negative");
  return Status::OK();
}

bool RetriesOn(const Status& status, const RetryPolicy& policy) {
  if (status.IsUnavailable()) return policy.retry_unavailable;
  return status.IsRetryable();
}

}  // namespace blobtable
