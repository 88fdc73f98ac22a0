// SPDX-License-Identifier: Apache-2.0
// The one injected time service (StoreOptions::clock).
#ifndef BLOBTABLE_CLOCK_H_
#define BLOBTABLE_CLOCK_H_

#include <chrono>
#include <string>

#include "blobtable/export.h"

namespace blobtable {

using TimePoint = std::chrono::system_clock::time_point;
using SteadyTime = std::chrono::steady_clock::time_point;

// The longest duration an option takes (a timeout, a lock's wait, a read
// policy's max_stale): ten years, which added to any clock's reading in
// nanoseconds cannot overflow. Longer is InvalidArgument.
inline constexpr std::chrono::milliseconds kMaxDuration{int64_t{10} * 365 * 24 * 3600 * 1000};

// The one time service, injected once (StoreOptions::clock): three clocks
// for three purposes, and the way to wait.
// - Now(), wall-clock time, for timestamps (an entity's Timestamp, a blob's
//   last-modified). No safety decision reads it (docs/protocol.md, X2).
// - Steady(), monotonic time, for every wait and timeout (busy_timeout,
//   lock_timeout, lease renewal, the Azure retry budget): a wall-clock step
//   never stretches or cuts a wait. The real one counts time the machine
//   spent suspended (CLOCK_BOOTTIME), as lease expiry does.
// - SinceBoot() with BootId(): what the embedded store judges leases by, a
//   monotonic time that every process on the machine shares, and the boot
//   it counts from. Setting the wall clock lets no lease lapse or last
//   longer, and a lease from before a reboot counts as run out
//   (docs/backends.md#clocks). Defaults: CLOCK_BOOTTIME and the kernel's boot id
//   (kBootIdPath). BootId() returns "" when it cannot tell the boot: the
//   embedded store then refuses to open (it cannot judge a lease), rather
//   than guess.
// - SleepFor(), every wait between tries (backoff at busy entities and
//   locks, Azure retries).
// Tests inject a fake clock whose SleepFor moves time instead of sleeping.
// Implementations must be thread-safe.
// Where the real clock reads the boot id.
inline constexpr char kBootIdPath[] = "/proc/sys/kernel/random/boot_id";

class BLOBTABLE_EXPORT Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  virtual SteadyTime Steady() const = 0;
  virtual void SleepFor(std::chrono::milliseconds d) const = 0;
  virtual std::chrono::milliseconds SinceBoot() const;
  virtual std::string BootId() const;
  // The process-wide real clock (system_clock, and CLOCK_BOOTTIME for
  // Steady). Never null.
  static Clock* Real();
};

}  // namespace blobtable

#endif  // BLOBTABLE_CLOCK_H_
