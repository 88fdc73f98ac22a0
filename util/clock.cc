// SPDX-License-Identifier: Apache-2.0
#include "blobtable/clock.h"

#include <time.h>

#include <fstream>
#include <thread>

namespace blobtable {
namespace {

// CLOCK_BOOTTIME: monotonic, shared by every process, and it goes on while
// the machine is suspended (a lease runs out then too).
std::chrono::nanoseconds BootTime() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

class RealClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::system_clock::now(); }
  SteadyTime Steady() const override {
    return SteadyTime(std::chrono::duration_cast<SteadyTime::duration>(BootTime()));
  }
  void SleepFor(std::chrono::milliseconds d) const override { std::this_thread::sleep_for(d); }
};

}  // namespace

std::chrono::milliseconds Clock::SinceBoot() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(BootTime());
}

std::string Clock::BootId() const {
  // Read once: it changes only with a reboot, which ends this process too.
  // "" when it cannot be read (a sandbox hiding /proc/sys): never a made-up
  // id, which would judge every other process's lease run out.
  static const std::string id = [] {
    std::ifstream in(kBootIdPath);
    std::string line;
    std::getline(in, line);
    return line;
  }();
  return id;
}

Clock* Clock::Real() {
  static RealClock clock;
  return &clock;
}

}  // namespace blobtable
