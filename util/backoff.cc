// SPDX-License-Identifier: Apache-2.0
// BackoffDelay (util/backoff.h): exponential backoff with full jitter.
#include "util/backoff.h"

#include <algorithm>

namespace blobtable::internal {

std::chrono::milliseconds BackoffDelay(const RetryPolicy& policy, int retry, uint64_t random) {
  const int64_t initial = policy.initial_delay.count();
  const int64_t cap = policy.max_delay.count();
  // initial * 2^(retry-1), without overflowing: past 2^30 it is the cap.
  const int shift = std::clamp(retry - 1, 0, 30);
  const int64_t bound = initial > (cap >> shift) ? cap : initial << shift;
  if (bound <= 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(static_cast<int64_t>(random % static_cast<uint64_t>(bound)));
}

}  // namespace blobtable::internal
