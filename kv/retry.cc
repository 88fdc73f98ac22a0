// SPDX-License-Identifier: Apache-2.0
// RetryPolicy's rules and its backoff (blobtable/retry.h, kv/retry_loop.h).
#include "blobtable/retry.h"

#include <algorithm>

#include "kv/retry_loop.h"
#include "util/random.h"

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

namespace internal {

std::chrono::milliseconds RetryDelay(const RetryPolicy& policy, int attempt) {
  const int64_t initial = policy.initial_delay.count();
  const int64_t cap = policy.max_delay.count();
  // initial * 2^(attempt-1), without overflowing: past 2^30 it is the cap.
  const int shift = std::clamp(attempt - 1, 0, 30);
  const int64_t bound = initial > (cap >> shift) ? cap : initial << shift;
  if (bound <= 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(
      static_cast<int64_t>(RandomU64() % static_cast<uint64_t>(bound)));
}

}  // namespace internal
}  // namespace blobtable
