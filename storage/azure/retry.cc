// SPDX-License-Identifier: Apache-2.0
#include "storage/azure/retry.h"

#include <algorithm>

namespace blobtable {

bool HttpRetryPolicy::IsRetryableStatus(int s) {
  return s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504;
}

std::chrono::milliseconds HttpRetryPolicy::DelayBefore(int attempt, uint64_t random) const {
  int64_t d = initial_delay.count();
  for (int i = 2; i < attempt && d < max_delay.count(); ++i) d *= 2;
  d = std::min<int64_t>(d, max_delay.count());
  int64_t half = d / 2;
  return std::chrono::milliseconds(
      half + static_cast<int64_t>(random % static_cast<uint64_t>(d - half + 1)));
}

}  // namespace blobtable
