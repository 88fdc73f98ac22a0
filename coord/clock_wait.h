// SPDX-License-Identifier: Apache-2.0
// Waiting for a time on the store's clock from a background thread that
// must also wake when told (stop, release).
#ifndef BLOBTABLE_COORD_CLOCK_WAIT_H_
#define BLOBTABLE_COORD_CLOCK_WAIT_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "blobtable/options.h"

namespace blobtable::internal::coord {

// Waits on `cv` (holding `lk`) until `until` on `clock`, a notify, or a
// spurious wake-up: callers loop. The real clock is waited on directly; any
// other (a fake clock moves without notice) is looked at every 20 ms.
inline void WaitOnClock(const Clock& clock, std::condition_variable& cv,
                        std::unique_lock<std::mutex>& lk, SteadyTime until) {
  const SteadyTime now = clock.Steady();
  if (now >= until) return;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now);
  cv.wait_for(lk, &clock == Clock::Real() ? left : std::min(left, std::chrono::milliseconds(20)));
}

}  // namespace blobtable::internal::coord

#endif  // BLOBTABLE_COORD_CLOCK_WAIT_H_
