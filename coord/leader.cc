// SPDX-License-Identifier: Apache-2.0
// LeaderElection: a campaign thread around a Lock on c/leaders/-<name>
// (blobtable/leader.h).
#include "blobtable/leader.h"

#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "blobtable/store.h"
#include "coord/clock_wait.h"
#include "coord/coord_names.h"
#include "util/macros.h"
#include "util/random.h"

namespace blobtable {

struct LeaderElection::State {
  const Store* store = nullptr;
  std::string name, label, blob;
  LeaderOptions options;
  pid_t pid = getpid();

  mutable std::mutex mu;
  mutable std::condition_variable cv;
  bool stopping = false;
  std::unique_ptr<Lock> lock;  // while leader
  int64_t term = 0;
  Status last_loss;
  SteadyTime last_expiry{};  // of the last term's lease, once it ended
  std::unique_ptr<std::thread> thread;

  bool Leading() const { return lock != nullptr && lock->held(); }
  void Run();
  // One try at the lease; true if it was taken.
  bool Campaign(std::unique_lock<std::mutex>& lk);
  // Steps down from a lease that is no longer held.
  void StepDown(std::unique_lock<std::mutex>& lk);
};

bool LeaderElection::State::Campaign(std::unique_lock<std::mutex>& lk) {
  LockOptions o;
  o.lease_seconds = options.lease_seconds;
  o.timeout = std::chrono::milliseconds(0);  // the waits between tries are ours
  o.owner = options.identity;
  lk.unlock();
  auto got = Lock::AcquireAt(*store, name, label, blob, o);
  lk.lock();
  if (!got.ok()) return false;  // led by another, or storage trouble: try again later
  if (stopping) {
    lk.unlock();
    (void)(*got)->Release();
    lk.lock();
    return false;
  }
  lock = std::move(*got);
  term = lock->token();
  cv.notify_all();
  const int64_t t = term;
  lk.unlock();
  if (options.on_change) options.on_change(true, t);
  lk.lock();
  return true;
}

void LeaderElection::State::StepDown(std::unique_lock<std::mutex>& lk) {
  std::unique_ptr<Lock> old = std::move(lock);
  const int64_t t = term;
  term = 0;
  last_loss = old->status().ok()
                  ? Status::LeaseLost(label + ": the lease may have lapsed (not renewed in time)")
                  : old->status();
  last_expiry = old->expiry();
  lk.unlock();
  // Not released: lost by the clock (renewals unanswered), the lease may
  // still be ours on storage, and what this leader started (a command it
  // supervises) must be stopped before the next leader comes in. The lease
  // runs out by itself at last_expiry.
  old->StopRenewing();
  if (options.on_change) options.on_change(false, t);
  lk.lock();
}

void LeaderElection::State::Run() {
  std::unique_lock<std::mutex> lk(mu);
  const Clock& clock = store->options().clock != nullptr ? *store->options().clock : *Clock::Real();
  while (!stopping) {
    if (lock == nullptr && clock.Steady() < last_expiry) {
      // Stepped down by the clock: the old lease may still be this
      // process's on storage until then, and no campaign can take it (nor
      // keep a resigning process waiting on an answer that is not coming).
      internal::coord::WaitOnClock(clock, cv, lk, last_expiry);
    } else if (lock == nullptr) {
      if (Campaign(lk)) continue;
      // Someone else leads: try again after 100..1000 ms, at random so that
      // campaigners do not retry in step.
      cv.wait_for(lk, std::chrono::milliseconds(100 + internal::RandomU64() % 900));
    } else if (!lock->held()) {
      StepDown(lk);
    } else {
      cv.wait_for(lk, std::chrono::milliseconds(50));  // held() turns false by the clock
    }
  }
}

Result<std::unique_ptr<LeaderElection>> LeaderElection::Start(const Store& store,
                                                              std::string_view name,
                                                              const LeaderOptions& options) {
  BT_RETURN_IF_ERROR(internal::coord::ValidateName(name, "leader election"));
  if (options.lease_seconds < 15 || options.lease_seconds > 60)
    return Status::InvalidArgument("LeaderOptions::lease_seconds must be 15..60, got " +
                                   std::to_string(options.lease_seconds));
  auto st = std::make_shared<State>();
  st->store = &store;
  st->name = std::string(name);
  st->label = "leader election " + st->name;
  st->blob = internal::coord::LeaderBlobName(name);
  st->options = options;
  State* raw = st.get();
  st->thread = std::make_unique<std::thread>([raw] { raw->Run(); });
  return std::unique_ptr<LeaderElection>(new LeaderElection(std::move(st)));
}

Result<LeaderInfo> LeaderElection::Current(const Store& store, std::string_view name) {
  BT_RETURN_IF_ERROR(internal::coord::ValidateName(name, "leader election"));
  BT_ASSIGN_OR_RETURN(LockInfo info, Lock::InspectAt(store, "leader election " + std::string(name),
                                                     internal::coord::LeaderBlobName(name)));
  return LeaderInfo{info.held, info.owner, info.token};
}

LeaderElection::~LeaderElection() { (void)Resign(); }

bool LeaderElection::is_leader() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->Leading();
}

int64_t LeaderElection::term() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->Leading() ? state_->term : 0;
}

bool LeaderElection::WaitForLeadership(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lk(state_->mu);
  return state_->cv.wait_for(lk, timeout, [&] { return state_->stopping || state_->Leading(); }) &&
         state_->Leading();
}

SteadyTime LeaderElection::lease_expiry() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->lock != nullptr ? state_->lock->expiry() : state_->last_expiry;
}

Status LeaderElection::last_loss() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->last_loss;
}

Status LeaderElection::Resign() {
  State& st = *state_;
  if (getpid() != st.pid) {     // a forked child: the campaign is the parent's
    (void)st.thread.release();  // (its Lock, destroyed here, knows the same)
    return Status::OK();
  }
  {
    std::lock_guard<std::mutex> lk(st.mu);
    if (st.stopping) return Status::OK();
    st.stopping = true;
  }
  st.cv.notify_all();
  if (st.thread && st.thread->joinable()) st.thread->join();
  std::unique_ptr<Lock> lock;
  {
    std::lock_guard<std::mutex> lk(st.mu);
    lock = std::move(st.lock);
    st.term = 0;
  }
  return lock ? lock->Release() : Status::OK();
}

}  // namespace blobtable
