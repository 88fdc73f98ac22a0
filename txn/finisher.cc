// SPDX-License-Identifier: Apache-2.0
#include "txn/finisher.h"

#include <system_error>

namespace blobtable::internal {

Finisher::~Finisher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Finisher::Submit(std::function<void()> job) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!thread_.joinable() && !stopping_) {
    try {
      thread_ = std::thread([this] { Loop(); });
    } catch (const std::system_error&) {
      lock.unlock();
      job();  // no thread to be had: finish now, on the caller's thread
      return;
    }
  }
  jobs_.push_back(std::move(job));
  wake_.notify_one();
}

void Finisher::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return jobs_.empty() && !running_job_; });
}

void Finisher::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and nothing left to do
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    running_job_ = true;
    lock.unlock();
    job();
    lock.lock();
    running_job_ = false;
    if (jobs_.empty()) idle_.notify_all();
  }
}

}  // namespace blobtable::internal
