#include "blobtable/options.h"

#include <thread>

namespace blobtable {
namespace {
class RealClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::system_clock::now(); }
  SteadyTime Steady() const override { return std::chrono::steady_clock::now(); }
  void SleepFor(std::chrono::milliseconds d) const override { std::this_thread::sleep_for(d); }
};
}  // namespace

Clock* Clock::Real() {
  static RealClock clock;
  return &clock;
}

}  // namespace blobtable
