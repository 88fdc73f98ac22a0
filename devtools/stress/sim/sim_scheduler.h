// SPDX-License-Identifier: Apache-2.0
// A deterministic scheduler for interleaving tests: actors run as threads,
// but only one at a time, and control changes hands only at scheduling
// points (before and after every storage request, at sync points, and in
// waits). Every choice (who runs next, who stalls and for how long, who is
// killed, which response is lost, when the wall clock steps) is made under
// one lock, in an order fixed by the choices before it, so a run replays.
// Two ways to choose:
// - random: drawn from one seeded generator (a seed is a schedule);
// - explore: from a ChoiceLog, which replays a prefix of choices and takes
//   the default after it, recording how many alternatives each point had,
//   so a depth-first driver can enumerate every schedule up to a bound on
//   preemptions and faults (exhaustive.h).
// Time is the shared FakeClock, moved only by the scheduler: when every live
// actor waits, it jumps to the earliest wake-up (a discrete-event
// simulation), so leases lapse without sleeping. Wake-ups are on the
// monotonic clock, so a wall-clock step (a fault) does not wake anyone.
//
// A killed actor stops at a scheduling point and never sends another
// request: to storage that is what SIGKILL looks like. It unwinds by an
// exception (SimKilled) thrown from the point; the actor's body catches it.
#ifndef BLOBTABLE_DEVTOOLS_STRESS_SIM_SIM_SCHEDULER_H_
#define BLOBTABLE_DEVTOOLS_STRESS_SIM_SIM_SCHEDULER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "blobtable/blob_store.h"
#include "storage/in_place.h"
#include "testing/fake_clock.h"

namespace blobtable::sim {

struct SimKilled {};

// What a scheduling point is: faults aim at protocol windows by it.
enum class PointKind {
  kStep,         // a named sync point ("txn.*", "recovery.*")
  kRequest,      // before a storage request
  kAnswered,     // after a storage request
  kCommitPoint,  // before a record create that says committed (a coordinator's)
  kAbortCreate,  // before a record create that says aborted (a decider's)
  kIntentRead,   // after an entity GET that returned an intent (its record not read yet)
};

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
  // Per put or delete presenting a lease: the lease is broken just before
  // (an operator's Break Lease, or the stress tool's lease-lost fault).
  double lease_break = 0.0;
  // At sync points (named protocol steps: "txn.*", "recovery.*") instead of
  // the above: where a coordinator or resolver pausing or dying matters most.
  double kill_at_step = 0.0;
  double stall_at_step = 0.0;
  // One step a run focuses on: killed there with this probability.
  std::string focus_step;
  double kill_at_focus = 0.0;
  // Aimed stalls (instead of `stall` at those points), between min_aimed
  // and max_stall: the window between a coordinator's last renewal and its
  // commit point; a decider's abort create (which may land after the
  // transaction committed, finished and removed its record); a reader
  // between an intent's GET and its record's.
  double stall_commit_point = 0.0;
  double stall_abort_create = 0.0;
  double stall_after_intent_read = 0.0;
  std::chrono::milliseconds min_aimed{16'000};
  // Per request: it is on the wire for 0..latency of simulated time, so the
  // requests of actors at work side by side overlap in time, as on a
  // network, and a stalled actor may wake between two requests of another
  // (0: requests take no time). A request that took time counts among the
  // actor's troubles (TroublesOfCaller), as a stall does: enough of it
  // fences a coordinator at work.
  std::chrono::milliseconds latency{0};
  // Per scheduling point: the wall clock alone steps by jump_min..jump_max,
  // forward or back (at most max_jumps in a run).
  double clock_jump = 0.0;
  int max_jumps = 0;
  std::chrono::milliseconds jump_min{31'000}, jump_max{60'000};
};

// What an exhaustive search may do at each point, and how often.
struct ExploreBounds {
  int preemptions = 2;  // switches away from a runnable actor (or off the default)
  int faults = 2;       // stalls, kills, lost answers and clock steps together
  bool stall = true, long_stall = false, kill = false, lose = false, jump = false;
  bool lease_break = false;  // a put or delete presenting a lease finds it broken
  // Faults only in the protocol's windows, as the random mode's aimed
  // stalls: before a record write that decides (a commit point, an abort),
  // and before a reader's next request after it read an intent (its
  // record's). Elsewhere a fault costs the search a branch per request;
  // here the bound reaches deeper schedules (violation 1 of issue 54 needs
  // two such stalls and two preemptions).
  bool aimed = false;
  std::chrono::milliseconds stall_for{16'000};  // past a 15 s lease
  std::chrono::milliseconds long_stall_for{31'000};
  std::chrono::milliseconds jump_by{31'000};  // forward
  // Waits (backoff) last at least this long: a waiter polling every few
  // milliseconds would give a search thousands of points; oversleeping is
  // something a real waiter may do anyway.
  std::chrono::milliseconds min_wait{4'000};
};

// The choices of one explored run: replays `prefix`, then takes 0 (the
// default: no fault, the same actor goes on) at every later choice point,
// recording how many alternatives each had. Only points with more than one
// alternative are recorded.
class ChoiceLog {
 public:
  explicit ChoiceLog(std::vector<int> prefix = {}) : prefix_(std::move(prefix)) {}
  int Choose(int alternatives, const std::function<std::string(int)>& describe);
  // The next prefix in depth-first order; nullopt when every schedule is done.
  std::optional<std::vector<int>> Next() const;
  const std::vector<int>& taken() const { return taken_; }
  // "i=c,..." for the non-default choices: parsed back by ParseSchedule.
  std::string Compact() const;
  // The non-default choices, one a line, in words.
  std::string Describe() const;
  static std::vector<int> ParseSchedule(std::string_view compact);

 private:
  std::vector<int> prefix_, taken_, sizes_;
  std::vector<std::string> notes_;  // for non-default choices
};

class SimScheduler {
 public:
  // Random mode: every choice drawn from `seed`.
  SimScheduler(uint64_t seed, internal::FakeClock& clock, SimFaults faults);
  // Explore mode: every choice from `log`, within `bounds`.
  SimScheduler(ChoiceLog& log, internal::FakeClock& clock, ExploreBounds bounds);
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
  void Point(std::string_view where, PointKind kind = PointKind::kStep);
  // Waits `d` of simulated time.
  void Sleep(std::chrono::milliseconds d);
  // True (chosen) when the write request just applied should lose its answer.
  bool LoseResponse();
  // True (chosen) when the lease a put or delete is about to present should
  // be broken first.
  bool BreakLeaseFirst();
  // A monotonic event counter: the order of everything that happened.
  uint64_t Step();

  // How often the calling actor stalled, lost an answer or saw the wall
  // clock step so far (0 on any other thread): a coordinator with none
  // during its commit was at work throughout (invariant L2).
  int TroublesOfCaller() const;

  int kills() const { return kills_; }
  int stalls() const { return stalls_; }
  int lost_responses() const { return lost_; }
  int jumps() const { return jumps_; }
  int lease_breaks() const { return breaks_; }
  // The last scheduling events, for failure messages.
  std::string Trace() const;

 private:
  struct Actor {
    std::string name;
    bool killable = false;
    std::function<void()> body;
    int64_t wake_ms = 0;  // runnable once the monotonic clock reaches this
    bool done = false;
    int troubles = 0;  // stalls, lost answers and wall-clock steps it met
    bool read_intent = false;  // its last answer was an intent (explore: a window)
  };
  int64_t NowMs() const;
  // Picks who runs next (under mu_); advances the clock if all wait. `me`:
  // the actor handing over (-1: none), the default to go on if runnable.
  void PickNextLocked(int me);
  // Hands over and waits for our next turn (under lk).
  void SwitchLocked(std::unique_lock<std::mutex>& lk, int me);
  void Note(std::string event);
  // The faults of a point, random or explored; throws SimKilled.
  void RandomFaults(Actor& a, std::string_view where, PointKind kind);
  void ExploreFaults(Actor& a, std::string_view where, PointKind kind);
  void Stall(Actor& a, int64_t ms, std::string_view where);
  void JumpClock(Actor& a, int64_t ms);
  bool Kill(Actor& a, std::string_view where);
  // A fault of the request the calling actor is making: explored where
  // `explored`, else drawn with `chance` (not drawn at all when it is 0
  // unless `draw_when_off`); counted in `count` and noted as `words`.
  bool RequestFault(bool explored, double chance, bool draw_when_off, const std::string& words,
                    int& count);

  internal::FakeClock& clock_;
  SimFaults faults_;
  std::mt19937_64 rng_;
  ChoiceLog* log_ = nullptr;  // explore mode
  ExploreBounds bounds_;
  int preemptions_left_ = 0, faults_left_ = 0;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Actor> actors_;
  std::vector<std::thread> threads_;
  int current_ = -1;
  int live_ = 0;
  uint64_t step_ = 0;
  int kills_ = 0, stalls_ = 0, lost_ = 0, jumps_ = 0, breaks_ = 0;
  std::deque<std::string> trace_;
};

// Routes every request of a BlobStore through the scheduler: a point before
// and after each (kinds for record creates and intent reads), and lost
// answers for writes. Atomic batches are requests too. With `in_place`
// (the backend under `target`, which reads in place: storage/in_place.h),
// the wrapper reads in place too, with the same points, so the simulated
// stores read as unwrapped embedded stores do.
std::shared_ptr<BlobStore> WrapForSimulation(std::shared_ptr<BlobStore> target, SimScheduler& sched,
                                             internal::InPlaceReader* in_place = nullptr);

}  // namespace blobtable::sim

#endif  // BLOBTABLE_DEVTOOLS_STRESS_SIM_SIM_SCHEDULER_H_
