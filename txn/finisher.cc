// SPDX-License-Identifier: Apache-2.0
#include "txn/finisher.h"

#include <system_error>

#include "txn/intent_resolver.h"  // NamesVersion

namespace blobtable::internal {

Finisher::~Finisher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void Finisher::Submit(std::function<void()> work, std::vector<std::string> blobs) {
  const auto now = std::chrono::steady_clock::now();
  // Timed and counted in the backlog until it ends (real time: a backlog
  // is this process's own threads').
  std::function<void()> job = [this, work = std::move(work), now] {
    work();
    if (lag_ != nullptr) lag_->Record(std::chrono::steady_clock::now() - now);
    std::lock_guard<std::mutex> lock(mu_);
    submitted_.erase(submitted_.find(now));
  };
  std::unique_lock<std::mutex> lock(mu_);
  submitted_.insert(now);
  // A thread more while the queue outgrows the threads waiting for work.
  if (jobs_.size() + 1 > idle_threads_ && threads_.size() < kThreads && !stopping_) {
    try {
      threads_.emplace_back([this] { Loop(); });
      ++idle_threads_;  // counted at once: the next Submit sees it
    } catch (const std::system_error&) {
      if (threads_.empty()) {
        lock.unlock();
        job();  // no thread to be had: finish now, on the caller's thread
        return;
      }
    }
  }
  Job queued{std::move(job), {}};
  for (std::string& blob : blobs) {
    auto [it, fresh] = queued.second.insert(std::move(blob));
    if (fresh) ++unsettled_[*it];
  }
  jobs_.push_back(std::move(queued));
  wake_.notify_one();
}

Finisher::Backlog Finisher::backlog() const {
  std::lock_guard<std::mutex> lock(mu_);
  Backlog b;
  b.jobs = jobs_.size() + running_.size();
  if (!submitted_.empty()) b.oldest = std::chrono::steady_clock::now() - *submitted_.begin();
  return b;
}

void Finisher::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  // A thread started for a job another thread took is still starting when
  // the queue empties; waiting for it too leaves the process quiet, so that
  // a fork() after Drain (the tests' killed coordinators) copies no lock a
  // starting thread held (clang 14's ASan allocator takes one then).
  idle_.wait(lock,
             [this] { return jobs_.empty() && running_.empty() && looping_ == threads_.size(); });
}

void Finisher::SettleLocked(const std::string& blob) {
  auto it = unsettled_.find(blob);
  if (it != unsettled_.end() && --it->second == 0) unsettled_.erase(it);
}

void Finisher::Settled(const std::string& blob) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Two running jobs settle one blob only when a commit gave up waiting
    // for the first (WaitSettled timed out): either may count it.
    for (Job& job : running_)
      if (job.second.erase(blob) > 0) {
        SettleLocked(blob);
        break;
      }
  }
  settled_.notify_all();
}

bool Finisher::WaitSettled(const std::vector<std::string>& blobs,
                           std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return settled_.wait_for(lock, timeout, [&] {
    for (const std::string& blob : blobs)
      if (unsettled_.count(blob) > 0) return false;
    return true;
  });
}

namespace {
size_t BodyBytes(const Rewrites::Rewrite& r) { return r.body ? r.body->size() : 0; }
}  // namespace

void Rewrites::Note(const std::string& blob, Rewrite rewrite) {
  if (rewrite.body && rewrite.body->size() > kBodyBytes) rewrite.body.reset();
  std::lock_guard<std::mutex> lock(mu_);
  Rewrite& kept = rewrites_[blob];
  bodies_bytes_ -= BodyBytes(kept);
  kept = std::move(rewrite);
  bodies_bytes_ += BodyBytes(kept);
  order_.push_back(blob);
  while (order_.size() > kRemembered || bodies_bytes_ > kBodiesBytes) ForgetOldestLocked();
}

void Rewrites::ForgetOldestLocked() {
  auto it = rewrites_.find(order_.front());  // perhaps a newer one: only forgotten
  if (it != rewrites_.end()) {
    bodies_bytes_ -= BodyBytes(it->second);
    rewrites_.erase(it);
  }
  order_.pop_front();
}

std::optional<Rewrites::Rewrite> Rewrites::LastWithBody(const std::string& blob) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = rewrites_.find(blob);
  if (it == rewrites_.end() || !it->second.body) return std::nullopt;
  return it->second;
}

std::optional<Rewrites::Rewrite> Rewrites::Of(const std::string& blob,
                                              std::string_view handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = rewrites_.find(blob);
  if (it == rewrites_.end() || handle.empty()) return std::nullopt;
  const Rewrite& r = it->second;
  if (handle != r.intent_etag && handle != r.etag && !NamesVersion(r.same_as, handle))
    return std::nullopt;
  return Rewrite{r.intent_etag, r.etag, r.same_as, std::nullopt};  // its body is not asked for
}

void Finisher::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  ++looping_;
  if (jobs_.empty() && running_.empty()) idle_.notify_all();
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and nothing left to do
    --idle_threads_;
    auto job = running_.insert(running_.end(), std::move(jobs_.front()));
    jobs_.pop_front();
    std::function<void()> run = std::move(job->first);
    lock.unlock();
    run();
    run = nullptr;  // what the job owns goes before it counts as done
    lock.lock();
    for (const std::string& blob : job->second) SettleLocked(blob);
    running_.erase(job);
    ++idle_threads_;
    settled_.notify_all();
    if (jobs_.empty() && running_.empty()) idle_.notify_all();
  }
}

}  // namespace blobtable::internal
