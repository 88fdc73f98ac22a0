// SPDX-License-Identifier: Apache-2.0
// A fake time service (Clock, include/blobtable/options.h) for tests and the
// deterministic simulation: lease expiry and waits without sleeping.
#ifndef BLOBTABLE_TESTING_FAKE_CLOCK_H_
#define BLOBTABLE_TESTING_FAKE_CLOCK_H_

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "blobtable/clock.h"

namespace blobtable::internal {

// Wall-clock and monotonic time that move only when told, shared with forked
// children (its time lives in shared anonymous memory, so processes forked
// after it was made see every Advance()). Advance() moves both, as real time
// passing does; Jump() moves the wall clock alone, as setting it does.
// SleepFor() advances, or runs the hook set_sleep() gave it.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint(std::chrono::seconds(1'700'000'000)))
      : ms_(static_cast<std::atomic<int64_t>*>(mmap(nullptr, 2 * sizeof(std::atomic<int64_t>),
                                                    PROT_READ | PROT_WRITE,
                                                    MAP_SHARED | MAP_ANONYMOUS, -1, 0))) {
    new (&ms_[0]) std::atomic<int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(start.time_since_epoch()).count());
    new (&ms_[1]) std::atomic<int64_t>(0);
  }
  ~FakeClock() override { munmap(ms_, 2 * sizeof(*ms_)); }
  FakeClock(const FakeClock&) = delete;
  FakeClock& operator=(const FakeClock&) = delete;

  TimePoint Now() const override { return TimePoint(std::chrono::milliseconds(ms_[0].load())); }
  SteadyTime Steady() const override {
    return SteadyTime(std::chrono::milliseconds(ms_[1].load()));
  }
  void SleepFor(std::chrono::milliseconds d) const override {
    if (sleep_)
      sleep_(d);
    else
      Advance(d);
  }
  // Leases on the embedded store follow the monotonic time: Jump() lets
  // none lapse.
  std::chrono::milliseconds SinceBoot() const override {
    return std::chrono::milliseconds(ms_[1].load());
  }
  std::string BootId() const override { return "fake-clock"; }
  void Advance(std::chrono::milliseconds d) const {
    ms_[0].fetch_add(d.count());
    ms_[1].fetch_add(d.count());
  }
  void Jump(std::chrono::milliseconds d) const { ms_[0].fetch_add(d.count()); }
  // Moves both clocks forward to monotonic time `due`, if they are not past
  // it already (another sleeper's wake-up got there first).
  void AdvanceTo(SteadyTime due) const {
    const int64_t target =
        std::chrono::duration_cast<std::chrono::milliseconds>(due.time_since_epoch()).count();
    int64_t now = ms_[1].load();
    while (now < target && !ms_[1].compare_exchange_weak(now, target)) {}
    if (now < target) ms_[0].fetch_add(target - now);  // the wall clock moves as far
  }
  // A sleep for tests where threads and processes work side by side: it
  // really sleeps d / speedup, the clock rising meanwhile at `speedup`
  // times real time from where it stood when the sleep began, up to the
  // moment the sleeper was due to wake (AdvanceTo: never back; a moment
  // another sleeper already passed leaves the clock where it is). So:
  // - sleepers side by side share time rather than add theirs up: the
  //   clock runs at most `speedup` times real time, and work that takes a
  //   second of real time (a coordinator holding a lease while others back
  //   off) spans at most `speedup` seconds of it, however many wait;
  // - time passes while the sleeper sleeps, a step each time it wakes
  //   (every millisecond of real time, or later on a loaded machine: a
  //   sleeper kept from running for a while moves the clock that much at
  //   once), not all of it as the sleep ends: others see it pass before the
  //   sleeper goes on (a build's grace is real time for the writers that
  //   must notice it).
  void SleepPaced(std::chrono::milliseconds d, int speedup) const {
    using std::chrono::steady_clock;
    const int64_t from = ms_[1].load();
    const auto began = steady_clock::now();
    const auto real = std::chrono::duration_cast<steady_clock::duration>(d) / std::max(1, speedup);
    for (;;) {
      const auto slept = steady_clock::now() - began;
      if (slept >= real) break;
      const auto risen = std::chrono::duration_cast<std::chrono::milliseconds>(slept * speedup);
      AdvanceTo(SteadyTime(std::chrono::milliseconds(from) + std::min(risen, d)));
      std::this_thread::sleep_for(
          std::min<steady_clock::duration>(real - slept, std::chrono::milliseconds(1)));
    }
    AdvanceTo(SteadyTime(std::chrono::milliseconds(from) + d));
  }
  // Set before the clock is shared with other threads.
  void set_sleep(std::function<void(std::chrono::milliseconds)> sleep) {
    sleep_ = std::move(sleep);
  }

 private:
  std::atomic<int64_t>* ms_;  // [0] wall, [1] monotonic
  std::function<void(std::chrono::milliseconds)> sleep_;
};

// Another process's view of `base` (which must outlive it): its wall clock
// set `wall_offset` away from base's, as clocks of two machines differ (or
// one set by hand), while monotonic time, the boot and sleeping are base's;
// and, where `boot_id` is given, that boot id ("" for one it cannot read).
class SkewedClock final : public Clock {
 public:
  SkewedClock(const Clock& base, std::chrono::milliseconds wall_offset,
              std::optional<std::string> boot_id = std::nullopt)
      : base_(base), offset_(wall_offset), boot_id_(std::move(boot_id)) {}
  TimePoint Now() const override { return base_.Now() + offset_; }
  SteadyTime Steady() const override { return base_.Steady(); }
  void SleepFor(std::chrono::milliseconds d) const override { base_.SleepFor(d); }
  std::chrono::milliseconds SinceBoot() const override { return base_.SinceBoot(); }
  std::string BootId() const override { return boot_id_ ? *boot_id_ : base_.BootId(); }

 private:
  const Clock& base_;
  const std::chrono::milliseconds offset_;
  const std::optional<std::string> boot_id_;
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TESTING_FAKE_CLOCK_H_
