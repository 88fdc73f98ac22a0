// SPDX-License-Identifier: Apache-2.0
// The Azure backend's HTTP retries (storage/azure/retry.h).
#include "storage/azure/retry.h"

namespace blobtable {

bool IsRetryableHttpStatus(int s) {
  return s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504;
}

RetryPolicy DefaultHttpRetryPolicy() {
  RetryPolicy p;
  p.max_attempts = 5;
  p.initial_delay = std::chrono::milliseconds(200);
  p.max_delay = std::chrono::milliseconds(8'000);
  p.max_total = std::chrono::milliseconds(60'000);
  return p;
}

}  // namespace blobtable
