#include "tools/stress/sim/sim_scheduler.h"

#include "util/macros.h"

#include <algorithm>
#include <limits>

namespace blobtable::sim {
namespace {
thread_local const SimScheduler* tl_sched = nullptr;
thread_local int tl_actor = -1;
constexpr size_t kTraceLength = 400;
}  // namespace

SimScheduler::SimScheduler(uint64_t seed, FakeClock& clock, SimFaults faults)
    : clock_(clock), faults_(faults), rng_(seed) {}

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

int64_t SimScheduler::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now().time_since_epoch())
      .count();
}

void SimScheduler::Note(std::string event) {
  trace_.push_back("#" + std::to_string(step_) + " t=" + std::to_string(NowMs() % 1'000'000) +
                   " " + std::move(event));
  if (trace_.size() > kTraceLength) trace_.pop_front();
}

std::string SimScheduler::Trace() const {
  std::lock_guard<std::mutex> lk(mu_);
  std::string out;
  for (const auto& e : trace_) out += "  " + e + "\n";
  return out;
}

void SimScheduler::PickNextLocked() {
  std::vector<int> runnable;
  for (;;) {
    int64_t now = NowMs(), earliest = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i < actors_.size(); ++i) {
      if (actors_[i].done) continue;
      if (actors_[i].wake_ms <= now) runnable.push_back(static_cast<int>(i));
      else earliest = std::min(earliest, actors_[i].wake_ms);
    }
    if (!runnable.empty()) break;
    if (earliest == std::numeric_limits<int64_t>::max()) {
      current_ = -1;  // everyone is done
      return;
    }
    clock_.Advance(std::chrono::milliseconds(earliest - now));  // all wait: time jumps
  }
  current_ = runnable[rng_() % runnable.size()];
}

void SimScheduler::SwitchLocked(std::unique_lock<std::mutex>& lk, int me) {
  PickNextLocked();
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
      } catch (const SimKilled&) {
      }
      std::lock_guard<std::mutex> lk(mu_);
      actors_[i].done = true;
      --live_;
      Note(actors_[i].name + " ends");
      PickNextLocked();
      cv_.notify_all();
    });
  }
  std::unique_lock<std::mutex> lk(mu_);
  PickNextLocked();
  cv_.notify_all();
  cv_.wait(lk, [&] { return live_ == 0; });
  lk.unlock();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void SimScheduler::Point(std::string_view where) {
  if (tl_sched != this) return;
  const int me = tl_actor;
  std::unique_lock<std::mutex> lk(mu_);
  ++step_;
  Actor& a = actors_[me];
  std::uniform_real_distribution<double> p(0.0, 1.0);
  const bool step = where.rfind("txn.", 0) == 0 || where.rfind("recovery.", 0) == 0;
  const double kill = where == faults_.focus_step ? faults_.kill_at_focus
                      : step                       ? faults_.kill_at_step
                                                   : faults_.kill;
  const double stall = step ? faults_.stall_at_step : faults_.stall;
  if (a.killable && kills_ < faults_.max_kills && p(rng_) < kill) {
    ++kills_;
    Note(a.name + " KILLED at " + std::string(where));
    throw SimKilled{};  // the thread's epilogue hands over
  }
  if (p(rng_) < stall) {
    int64_t ms = static_cast<int64_t>(rng_() % (faults_.max_stall.count() + 1));
    a.wake_ms = NowMs() + ms;
    ++stalls_;
    Note(a.name + " stalls " + std::to_string(ms) + " ms at " + std::string(where));
  } else {
    Note(a.name + " " + std::string(where));
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
  actors_[me].wake_ms = NowMs() + d.count();
  Note(actors_[me].name + " waits " + std::to_string(d.count()) + " ms");
  SwitchLocked(lk, me);
}

bool SimScheduler::LoseResponse() {
  if (tl_sched != this) return false;
  std::lock_guard<std::mutex> lk(mu_);
  if (std::uniform_real_distribution<double>(0.0, 1.0)(rng_) >= faults_.lost_response) return false;
  ++lost_;
  Note(actors_[tl_actor].name + " loses the answer");
  return true;
}

uint64_t SimScheduler::Step() {
  std::lock_guard<std::mutex> lk(mu_);
  return ++step_;
}

namespace {

class SimStore final : public BlobStoreWrapper {
 public:
  SimStore(std::shared_ptr<BlobStore> t, SimScheduler& s) : BlobStoreWrapper(std::move(t)), s_(s) {}

  Result<GetResult> Get(std::string_view n, const ReadOptions& o) override {
    return Read("get", n, [&] { return BlobStoreWrapper::Get(n, o); });
  }
  Result<GetResult> Head(std::string_view n, const AccessConditions& c) override {
    return Read("head", n, [&] { return BlobStoreWrapper::Head(n, c); });
  }
  Result<ListPage> List(const ListOptions& o) override {
    return Read("list", o.prefix, [&] { return BlobStoreWrapper::List(o); });
  }
  Result<WriteResult> Put(std::string_view n, std::string_view d, const PutOptions& o) override {
    return Write("put", n, [&] { return BlobStoreWrapper::Put(n, d, o); });
  }
  Status Delete(std::string_view n, const WriteOptions& o) override {
    return Write("delete", n, [&] { return BlobStoreWrapper::Delete(n, o); });
  }
  Result<WriteResult> SetMetadata(std::string_view n, const Metadata& m,
                                  const WriteOptions& o) override {
    return Write("metadata", n, [&] { return BlobStoreWrapper::SetMetadata(n, m, o); });
  }
  Result<LeaseResult> AcquireLease(std::string_view n, int d, std::string_view p,
                                   const AccessConditions& c) override {
    return Write("acquire", n, [&] { return BlobStoreWrapper::AcquireLease(n, d, p, c); });
  }
  Result<LeaseResult> RenewLease(std::string_view n, std::string_view id,
                                 const AccessConditions& c) override {
    return Write("renew", n, [&] { return BlobStoreWrapper::RenewLease(n, id, c); });
  }
  Result<LeaseResult> ChangeLease(std::string_view n, std::string_view id, std::string_view p,
                                  const AccessConditions& c) override {
    return Write("change", n, [&] { return BlobStoreWrapper::ChangeLease(n, id, p, c); });
  }
  Result<LeaseResult> ReleaseLease(std::string_view n, std::string_view id,
                                   const AccessConditions& c) override {
    return Write("release", n, [&] { return BlobStoreWrapper::ReleaseLease(n, id, c); });
  }
  Result<LeaseResult> BreakLease(std::string_view n, std::optional<int> p,
                                 const AccessConditions& c) override {
    return Write("break", n, [&] { return BlobStoreWrapper::BreakLease(n, p, c); });
  }

 private:
  template <typename F>
  auto Read(const char* what, std::string_view name, F call) -> decltype(call()) {
    s_.Point(std::string(what) + " " + std::string(name));
    auto r = call();
    s_.Point(std::string(what) + " answered");
    return r;
  }
  template <typename F>
  auto Write(const char* what, std::string_view name, F call) -> decltype(call()) {
    s_.Point(std::string(what) + " " + std::string(name));
    auto r = call();
    std::string outcome = StatusOf(r).ok() ? "ok" : StatusOf(r).ToString();
    s_.Point(std::string(what) + " -> " + outcome.substr(0, 80));
    if (StatusOf(r).ok() && s_.LoseResponse())
      return Status::Unavailable("simulated: the answer to this " + std::string(what) +
                                 " was lost (it was applied)");
    return r;
  }

  SimScheduler& s_;
};

}  // namespace

std::shared_ptr<BlobStore> WrapForSimulation(std::shared_ptr<BlobStore> target,
                                             SimScheduler& sched) {
  return std::make_shared<SimStore>(std::move(target), sched);
}

}  // namespace blobtable::sim
