// SPDX-License-Identifier: Apache-2.0
#include "devtools/stress/sim/sim_scheduler.h"

#include "util/macros.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace blobtable::sim {
namespace {
thread_local const SimScheduler* tl_sched = nullptr;
thread_local int tl_actor = -1;
constexpr size_t kTraceLength = 400;

bool IsStep(std::string_view where) {
  return where.rfind("txn.", 0) == 0 || where.rfind("recovery.", 0) == 0;
}
}  // namespace

// ---- ChoiceLog ----

int ChoiceLog::Choose(int alternatives, const std::function<std::string(int)>& describe) {
  if (alternatives <= 1) return 0;
  const size_t at = taken_.size();
  int c = at < prefix_.size() ? prefix_[at] : 0;
  if (c >= alternatives) c = 0;  // a replayed schedule from other code: best effort
  taken_.push_back(c);
  sizes_.push_back(alternatives);
  if (c != 0) notes_.push_back("#" + std::to_string(at) + " " + describe(c));
  return c;
}

std::optional<std::vector<int>> ChoiceLog::Next() const {
  for (size_t i = taken_.size(); i-- > 0;) {
    if (taken_[i] + 1 < sizes_[i]) {
      std::vector<int> next(taken_.begin(), taken_.begin() + static_cast<long>(i));
      next.push_back(taken_[i] + 1);
      return next;
    }
  }
  return std::nullopt;
}

std::string ChoiceLog::Compact() const {
  std::string out;
  for (size_t i = 0; i < taken_.size(); ++i)
    if (taken_[i] != 0)
      out += (out.empty() ? "" : ",") + std::to_string(i) + "=" + std::to_string(taken_[i]);
  return out.empty() ? "-" : out;
}

std::string ChoiceLog::Describe() const {
  std::string out;
  for (const std::string& n : notes_) out += "  " + n + "\n";
  return out;
}

std::vector<int> ChoiceLog::ParseSchedule(std::string_view compact) {
  std::vector<int> out;
  std::stringstream in{std::string(compact)};
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) continue;
    const size_t i = std::stoul(item.substr(0, eq));
    if (out.size() <= i) out.resize(i + 1, 0);
    out[i] = std::stoi(item.substr(eq + 1));
  }
  return out;
}

// ---- SimScheduler ----

SimScheduler::SimScheduler(uint64_t seed, internal::FakeClock& clock, SimFaults faults)
    : clock_(clock), faults_(faults), rng_(seed) {}

SimScheduler::SimScheduler(ChoiceLog& log, internal::FakeClock& clock, ExploreBounds bounds)
    : clock_(clock),
      rng_(0),
      log_(&log),
      bounds_(bounds),
      preemptions_left_(bounds.preemptions),
      faults_left_(bounds.faults) {}

SimScheduler::~SimScheduler() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void SimScheduler::Spawn(std::string name, bool killable, std::function<void()> body) {
  Actor a;
  a.name = std::move(name);
  a.killable = killable;
  a.body = std::move(body);
  actors_.push_back(std::move(a));
}

// Monotonic: a wall-clock step must not wake a sleeper or stop one.
int64_t SimScheduler::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Steady().time_since_epoch())
      .count();
}

void SimScheduler::Note(std::string event) {
  trace_.push_back("#" + std::to_string(step_) + " t=" + std::to_string(NowMs() % 1'000'000) + " " +
                   std::move(event));
  if (trace_.size() > kTraceLength) trace_.pop_front();
}

std::string SimScheduler::Trace() const {
  std::lock_guard<std::mutex> lk(mu_);
  std::string out;
  for (const auto& e : trace_) out += "  " + e + "\n";
  return out;
}

void SimScheduler::PickNextLocked(int me) {
  std::vector<int> runnable;
  for (;;) {
    int64_t now = NowMs(), earliest = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i < actors_.size(); ++i) {
      if (actors_[i].done) continue;
      if (actors_[i].wake_ms <= now)
        runnable.push_back(static_cast<int>(i));
      else
        earliest = std::min(earliest, actors_[i].wake_ms);
    }
    if (!runnable.empty()) break;
    if (earliest == std::numeric_limits<int64_t>::max()) {
      current_ = -1;  // everyone is done
      return;
    }
    clock_.Advance(std::chrono::milliseconds(earliest - now));  // all wait: time jumps
  }
  if (log_ == nullptr) {
    current_ = runnable[rng_() % runnable.size()];
    return;
  }
  // Explore: round robin from `me` (itself first if runnable, else the one
  // after it); any other pick is a preemption, within the bound.
  const int n = static_cast<int>(actors_.size());
  const bool me_runs = me >= 0 && std::find(runnable.begin(), runnable.end(), me) != runnable.end();
  const int from = me < 0 ? 0 : me_runs ? me : me + 1;
  std::vector<int> order;
  for (int k = 0; k < n; ++k) {
    const int i = (from + k) % n;
    if (std::find(runnable.begin(), runnable.end(), i) != runnable.end()) order.push_back(i);
  }
  runnable = std::move(order);
  const int options = preemptions_left_ > 0 ? static_cast<int>(runnable.size()) : 1;
  const int c = log_->Choose(options, [&](int k) {
    return "switch to " + actors_[runnable[k]].name +
           (me >= 0 ? " (from " + actors_[me].name + ")" : std::string());
  });
  if (c > 0) --preemptions_left_;
  current_ = runnable[c];
}

void SimScheduler::SwitchLocked(std::unique_lock<std::mutex>& lk, int me) {
  PickNextLocked(me);
  if (current_ == me) return;
  cv_.notify_all();
  cv_.wait(lk, [&] { return current_ == me; });
}

void SimScheduler::Run() {
  for (size_t i = 0; i < actors_.size(); ++i) {
    ++live_;
    threads_.emplace_back([this, i] {
      tl_sched = this;
      tl_actor = static_cast<int>(i);
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return current_ == static_cast<int>(i); });
      }
      try {
        actors_[i].body();
      } catch (const SimKilled&) {}
      std::lock_guard<std::mutex> lk(mu_);
      actors_[i].done = true;
      --live_;
      Note(actors_[i].name + " ends");
      PickNextLocked(static_cast<int>(i));
      cv_.notify_all();
    });
  }
  std::unique_lock<std::mutex> lk(mu_);
  PickNextLocked(-1);
  cv_.notify_all();
  cv_.wait(lk, [&] { return live_ == 0; });
  lk.unlock();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void SimScheduler::Stall(Actor& a, int64_t ms, std::string_view where) {
  a.wake_ms = NowMs() + ms;
  ++stalls_;
  ++a.troubles;
  Note(a.name + " stalls " + std::to_string(ms) + " ms at " + std::string(where));
}

void SimScheduler::JumpClock(Actor& a, int64_t ms) {
  clock_.Jump(std::chrono::milliseconds(ms));
  ++jumps_;
  ++a.troubles;
  Note(a.name + " sees the wall clock step " + std::to_string(ms) + " ms");
}

bool SimScheduler::Kill(Actor& a, std::string_view where) {
  ++kills_;
  Note(a.name + " KILLED at " + std::string(where));
  return true;
}

void SimScheduler::RandomFaults(Actor& a, std::string_view where, PointKind kind) {
  std::uniform_real_distribution<double> p(0.0, 1.0);
  const bool step = IsStep(where);
  const double kill = where == faults_.focus_step ? faults_.kill_at_focus
                      : step                      ? faults_.kill_at_step
                                                  : faults_.kill;
  if (a.killable && kills_ < faults_.max_kills && p(rng_) < kill && Kill(a, where))
    throw SimKilled{};  // the thread's epilogue hands over
  // Draws for the newer faults only where they are on: seeds of runs
  // without them keep their schedules.
  if (faults_.clock_jump > 0 && jumps_ < faults_.max_jumps && p(rng_) < faults_.clock_jump) {
    const int64_t lo = faults_.jump_min.count(), hi = std::max(lo, faults_.jump_max.count());
    const int64_t ms = lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
    JumpClock(a, rng_() % 2 ? ms : -ms);
  }
  double aimed = 0;
  if (kind == PointKind::kCommitPoint) aimed = faults_.stall_commit_point;
  if (kind == PointKind::kAbortCreate) aimed = faults_.stall_abort_create;
  if (kind == PointKind::kIntentRead) aimed = faults_.stall_after_intent_read;
  if (aimed > 0 && p(rng_) < aimed) {
    const int64_t lo = faults_.min_aimed.count(), hi = std::max(lo, faults_.max_stall.count());
    Stall(a, lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1)), where);
    return;
  }
  if (p(rng_) < (step ? faults_.stall_at_step : faults_.stall)) {
    Stall(a, static_cast<int64_t>(rng_() % (faults_.max_stall.count() + 1)), where);
    return;
  }
  const bool request = kind == PointKind::kRequest || kind == PointKind::kCommitPoint ||
                       kind == PointKind::kAbortCreate;
  if (request && faults_.latency.count() > 0) {
    const int64_t ms = static_cast<int64_t>(
        rng_() % static_cast<uint64_t>(faults_.latency.count() + 1));
    a.wake_ms = NowMs() + ms;
    // Time on the wire is time a coordinator's lease runs with no renewal:
    // enough of it fences a coordinator at work (L3), as a stall does.
    if (ms > 0) ++a.troubles;
  }
  Note(a.name + " " + std::string(where));
}

// Explore: faults only before requests (a fault after one is the same as
// before the next, to storage), each alternative a recorded choice.
void SimScheduler::ExploreFaults(Actor& a, std::string_view where, PointKind kind) {
  Note(a.name + " " + std::string(where));
  if (kind == PointKind::kIntentRead) a.read_intent = true;
  if (kind == PointKind::kStep || kind == PointKind::kAnswered || kind == PointKind::kIntentRead)
    return;
  const bool window =
      kind == PointKind::kCommitPoint || kind == PointKind::kAbortCreate || a.read_intent;
  a.read_intent = false;
  if (bounds_.aimed && !window) return;
  enum Fault { kNone, kStall, kLongStall, kKill, kJump };
  std::vector<Fault> menu{kNone};
  if (faults_left_ > 0) {
    if (bounds_.stall) menu.push_back(kStall);
    if (bounds_.long_stall) menu.push_back(kLongStall);
    if (bounds_.kill && a.killable) menu.push_back(kKill);
    if (bounds_.jump) menu.push_back(kJump);
  }
  static const char* const kWords[] = {"", "stall", "long stall", "kill", "wall clock step"};
  const int c = log_->Choose(static_cast<int>(menu.size()), [&](int k) {
    return a.name + ": " + kWords[menu[k]] + " before " + std::string(where);
  });
  if (c == 0) return;
  --faults_left_;
  switch (menu[c]) {
    case kStall: Stall(a, bounds_.stall_for.count(), where); break;
    case kLongStall: Stall(a, bounds_.long_stall_for.count(), where); break;
    case kKill: Kill(a, where); throw SimKilled{};
    case kJump: JumpClock(a, bounds_.jump_by.count()); break;
    case kNone: break;
  }
}

void SimScheduler::Point(std::string_view where, PointKind kind) {
  if (tl_sched != this) return;
  const int me = tl_actor;
  std::unique_lock<std::mutex> lk(mu_);
  ++step_;
  Actor& a = actors_[me];
  if (log_ != nullptr) {
    ExploreFaults(a, where, kind);
    // Only before requests may another actor take over: between two
    // requests of one actor, nothing another does can tell where it stopped.
    if (kind == PointKind::kStep || kind == PointKind::kAnswered ||
        kind == PointKind::kIntentRead) {
      if (a.wake_ms <= NowMs()) return;
    }
  } else {
    RandomFaults(a, where, kind);
  }
  SwitchLocked(lk, me);
}

void SimScheduler::Sleep(std::chrono::milliseconds d) {
  if (tl_sched != this) {
    clock_.Advance(d);
    return;
  }
  const int me = tl_actor;
  std::unique_lock<std::mutex> lk(mu_);
  ++step_;
  if (log_ != nullptr) d = std::max(d, bounds_.min_wait);
  actors_[me].wake_ms = NowMs() + d.count();
  Note(actors_[me].name + " waits " + std::to_string(d.count()) + " ms");
  SwitchLocked(lk, me);
}

bool SimScheduler::RequestFault(bool explored, double chance, bool draw_when_off,
                                const std::string& words, int& count) {
  if (tl_sched != this) return false;
  std::lock_guard<std::mutex> lk(mu_);
  bool chosen = false;
  const std::string event = actors_[tl_actor].name + " " + words;
  if (log_ != nullptr) {
    if (!explored || faults_left_ <= 0) return false;
    chosen = log_->Choose(2, [&](int) { return event; }) == 1;
    if (chosen) --faults_left_;
  } else if (chance > 0 || draw_when_off) {  // seeds of older runs keep their draws
    chosen = std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < chance;
  }
  if (!chosen) return false;
  ++count;
  ++actors_[tl_actor].troubles;
  Note(event);
  return true;
}

bool SimScheduler::LoseResponse() {
  return RequestFault(bounds_.lose, faults_.lost_response, /*draw_when_off=*/true,
                      "loses the answer", lost_);
}

bool SimScheduler::BreakLeaseFirst() {
  return RequestFault(bounds_.lease_break, faults_.lease_break, /*draw_when_off=*/false,
                      "finds the lease it presents broken", breaks_);
}

int SimScheduler::TroublesOfCaller() const {
  if (tl_sched != this) return 0;
  std::lock_guard<std::mutex> lk(mu_);
  return actors_[tl_actor].troubles;
}

uint64_t SimScheduler::Step() {
  std::lock_guard<std::mutex> lk(mu_);
  return ++step_;
}

}  // namespace blobtable::sim
