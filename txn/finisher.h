// SPDX-License-Identifier: Apache-2.0
// The store's background thread for work that follows a commit point
// (rewriting intents plain, releasing leases, deleting the record), so that
// Commit() returns once the outcome is decided. One thread per Store,
// started at the first job; jobs run in order. Destroying the Finisher (the
// Store and everything that shares it gone) runs the jobs still queued, then
// joins: at a normal process exit nothing is left behind. A process that
// dies first leaves intents that the next reader, writer or Recover finishes.
#ifndef BLOBTABLE_TXN_FINISHER_H_
#define BLOBTABLE_TXN_FINISHER_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace blobtable::internal {

class Finisher {
 public:
  Finisher() = default;
  Finisher(const Finisher&) = delete;
  Finisher& operator=(const Finisher&) = delete;
  ~Finisher();

  // Queues `job`; thread-safe. Jobs must not throw.
  void Submit(std::function<void()> job);
  // Returns once every job submitted before the call has run.
  void Drain();

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<std::function<void()>> jobs_;
  bool running_job_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_FINISHER_H_
