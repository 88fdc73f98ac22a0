// A deterministic scheduler for interleaving tests: actors run as threads,
// but only one at a time, and control changes hands only at scheduling
// points (before and after every storage request, at sync points, and in
// waits). Every choice (who runs next, who stalls and for how long, who is
// killed, which response is lost) is drawn from one seeded generator under
// one lock, in an order fixed by the choices before it, so a seed replays the
// same interleaving. Time is the shared FakeClock, moved only by the
// scheduler: when every live actor waits, it jumps to the earliest wake-up
// (a discrete-event simulation), so leases lapse without sleeping.
//
// A killed actor stops at a scheduling point and never sends another
// request: to storage that is what SIGKILL looks like. It unwinds by an
// exception (SimKilled) thrown from the point; the actor's body catches it.
#ifndef BLOBTABLE_TOOLS_STRESS_SIM_SIM_SCHEDULER_H_
#define BLOBTABLE_TOOLS_STRESS_SIM_SIM_SCHEDULER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "blobtable/blob_store.h"
#include "util/fake_clock.h"

namespace blobtable::sim {

struct SimKilled {};

struct SimFaults {
  // Per scheduling point of a killable actor (at most max_kills in a run).
  double kill = 0.0;
  int max_kills = 1;
  // Per scheduling point: the actor stalls (a GC pause, SIGSTOP, a slow
  // request) for a random time up to max_stall.
  double stall = 0.0;
  std::chrono::milliseconds max_stall{20'000};
  // Per write request: applied, but its answer is lost (Unavailable).
  double lost_response = 0.0;
  // At sync points (named protocol steps: "txn.*", "recovery.*") instead of
  // the above: where a coordinator or resolver pausing or dying matters most.
  double kill_at_step = 0.0;
  double stall_at_step = 0.0;
  // One step a run focuses on: killed there with this probability.
  std::string focus_step;
  double kill_at_focus = 0.0;
};

class SimScheduler {
 public:
  SimScheduler(uint64_t seed, FakeClock& clock, SimFaults faults);
  ~SimScheduler();
  SimScheduler(const SimScheduler&) = delete;
  SimScheduler& operator=(const SimScheduler&) = delete;

  // Adds an actor; Run() starts it. `killable`: the scheduler may kill it.
  void Spawn(std::string name, bool killable, std::function<void()> body);
  // Runs every actor until it finishes or is killed, one at a time.
  void Run();

  // ---- Called from actor threads (no-ops on any other thread) ----
  // A scheduling point: the actor may be killed (throws SimKilled), stall,
  // or hand over to another actor.
  void Point(std::string_view where);
  // Waits `d` of simulated time.
  void Sleep(std::chrono::milliseconds d);
  // True (drawn) when the write request just applied should lose its answer.
  bool LoseResponse();
  // A monotonic event counter: the order of everything that happened.
  uint64_t Step();

  int kills() const { return kills_; }
  int stalls() const { return stalls_; }
  int lost_responses() const { return lost_; }
  // The last scheduling events, for failure messages.
  std::string Trace() const;

 private:
  struct Actor {
    std::string name;
    bool killable = false;
    std::function<void()> body;
    int64_t wake_ms = 0;  // runnable once the clock reaches this
    bool done = false;
  };
  int64_t NowMs() const;
  // Picks who runs next (under mu_); advances the clock if all wait.
  void PickNextLocked();
  // Hands over and waits for our next turn (under lk).
  void SwitchLocked(std::unique_lock<std::mutex>& lk, int me);
  void Note(std::string event);

  FakeClock& clock_;
  SimFaults faults_;
  std::mt19937_64 rng_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Actor> actors_;
  std::vector<std::thread> threads_;
  int current_ = -1;
  int live_ = 0;
  uint64_t step_ = 0;
  int kills_ = 0, stalls_ = 0, lost_ = 0;
  std::deque<std::string> trace_;
};

// Routes every request of a BlobStore through the scheduler: a point before
// and after each, and lost answers for writes.
std::shared_ptr<BlobStore> WrapForSimulation(std::shared_ptr<BlobStore> target,
                                             SimScheduler& sched);

}  // namespace blobtable::sim

#endif  // BLOBTABLE_TOOLS_STRESS_SIM_SIM_SCHEDULER_H_
