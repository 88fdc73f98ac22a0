#include "blobtable/options.h"

namespace blobtable {
namespace {
class RealClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::system_clock::now(); }
  SteadyTime Steady() const override { return std::chrono::steady_clock::now(); }
};
}  // namespace

Clock* Clock::Real() {
  static RealClock clock;
  return &clock;
}

}  // namespace blobtable
