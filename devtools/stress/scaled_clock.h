// SPDX-License-Identifier: Apache-2.0
// A clock that runs `speed` times faster than real time, the same in every
// process that is given the same base instants: lease expiry, waits and
// timeouts on the local backend then pass in a fraction of the real time,
// and every process still agrees when a lease ends (the local backend judges
// leases by SinceBoot, scaled here as Steady is). Not for Azure: its leases run on the
// service's own clock.
#ifndef BLOBTABLE_DEVTOOLS_STRESS_SCALED_CLOCK_H_
#define BLOBTABLE_DEVTOOLS_STRESS_SCALED_CLOCK_H_

#include <chrono>
#include <cstdint>
#include <thread>

#include "blobtable/options.h"

namespace blobtable::stress {

class ScaledClock final : public Clock {
 public:
  // `base_wall_ns`: the wall-clock time at `base_steady_ns` (both read once
  // by the process that starts the others).
  ScaledClock(double speed, int64_t base_wall_ns, int64_t base_steady_ns)
      : speed_(speed), base_wall_ns_(base_wall_ns), base_steady_ns_(base_steady_ns) {}

  TimePoint Now() const override {
    return TimePoint(std::chrono::duration_cast<TimePoint::duration>(
        std::chrono::nanoseconds(base_wall_ns_ + Scaled())));
  }
  SteadyTime Steady() const override {
    return SteadyTime(std::chrono::duration_cast<SteadyTime::duration>(
        std::chrono::nanoseconds(base_steady_ns_ + Scaled())));
  }
  // Leases on the local backend run on the scaled monotonic time too.
  std::chrono::milliseconds SinceBoot() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Steady().time_since_epoch());
  }
  void SleepFor(std::chrono::milliseconds d) const override {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(d.count() / speed_));
  }

  static int64_t RealSteadyNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  static int64_t RealWallNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

 private:
  int64_t Scaled() const {
    return static_cast<int64_t>(static_cast<double>(RealSteadyNs() - base_steady_ns_) * speed_);
  }
  double speed_;
  int64_t base_wall_ns_, base_steady_ns_;
};

}  // namespace blobtable::stress

#endif  // BLOBTABLE_DEVTOOLS_STRESS_SCALED_CLOCK_H_
