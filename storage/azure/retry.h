// SPDX-License-Identifier: Apache-2.0
// Retry policy for storage requests: which answers are worth another try and
// how long to wait before it (exponential backoff with full jitter).
#ifndef BLOBTABLE_STORAGE_AZURE_RETRY_H_
#define BLOBTABLE_STORAGE_AZURE_RETRY_H_

#include <chrono>
#include <cstdint>

namespace blobtable {

struct HttpRetryPolicy {
  int max_attempts = 5;
  std::chrono::milliseconds initial_delay{200};
  std::chrono::milliseconds max_delay{8'000};
  std::chrono::milliseconds max_total{60'000};

  // 408, 429, 500, 502, 503, 504 (Azure's throttling and transient answers).
  static bool IsRetryableStatus(int http_status);
  // The wait before attempt `attempt` (2, 3, ...): uniform in [d/2, d] with
  // d = min(max_delay, initial_delay * 2^(attempt-2)); `random` supplies the
  // jitter.
  std::chrono::milliseconds DelayBefore(int attempt, uint64_t random) const;
};

}  // namespace blobtable

#endif  // BLOBTABLE_STORAGE_AZURE_RETRY_H_
