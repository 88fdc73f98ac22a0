// SPDX-License-Identifier: Apache-2.0
// The store's background threads for work that follows a commit point
// (rewriting intents plain, releasing leases, deleting the record), so that
// Commit() returns once the outcome is decided. Up to kThreads threads per
// Store, started as jobs queue up while the others are busy; jobs start in
// the order submitted and run side by side (the jobs of commits that share
// no entity are independent, and a commit on rows an earlier one wrote
// waits for their finishing first, WaitSettled; concurrent finishing of one
// intent is what the protocol expects anyway: If-Match its ETag). One
// thread would cap a store's commits at one finishing at a time (issue 32,
// goal 1: 16 commits/s at a 10 ms round trip however many workers).
// Destroying the Finisher (the Store and everything that shares it gone)
// runs the jobs still queued, then joins: at a normal process exit nothing
// is left behind. A process that dies first leaves intents that the next
// reader, writer or Recover finishes.
//
// A commit on rows or partitions this store just committed waits for their
// finishing (WaitSettled), then holds the plain rewrite of each version it
// read (Rewrites) instead of failing a round on the old handle (issue 32,
// goal 2).
#ifndef BLOBTABLE_TXN_FINISHER_H_
#define BLOBTABLE_TXN_FINISHER_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "util/metrics.h"

namespace blobtable::internal {

class Finisher {
 public:
  static constexpr size_t kThreads = 16;

  Finisher() = default;
  Finisher(const Finisher&) = delete;
  Finisher& operator=(const Finisher&) = delete;
  ~Finisher();

  // Queues `job`, which settles `blobs` (the entities it rewrites, the locks
  // it lets go of); thread-safe. Jobs must not throw. Each blob counts as
  // settled once the job calls Settled for it, or when the job ends.
  void Submit(std::function<void()> job, std::vector<std::string> blobs = {});
  // Where each job's time from Submit to its end is recorded (null: not);
  // set before the first Submit.
  void CountLagIn(LatencyHistogram* lag) { lag_ = lag; }
  // The jobs queued or running, and how long ago the oldest was submitted
  // (0 with none).
  struct Backlog {
    size_t jobs = 0;
    std::chrono::nanoseconds oldest{0};
  };
  Backlog backlog() const;
  // Returns once no job is queued or running (so every job submitted
  // before the call has run) and every thread started is waiting for work.
  void Drain();

  // Called by a job (from any of its threads) once `blob` is settled: its
  // intent rewritten or its lease let go of. Credited to the first running
  // job that settles `blob`: two do only when a commit gave up waiting for
  // the first (WaitSettled timed out), and then the count may reach zero
  // while the later job still works; a commit waiting for it then meets its
  // intent as another store's (a failed round, nothing worse).
  void Settled(const std::string& blob);
  // Waits until no queued or running job has any of `blobs` unsettled, at
  // most `timeout` (real time: a wait for this process's own thread, which
  // a test may hold at a sync point). False if it timed out.
  bool WaitSettled(const std::vector<std::string>& blobs, std::chrono::milliseconds timeout);

 private:
  // What to run, and the blobs it has not settled yet. Standard types only:
  // a std::deque of a type of ours instantiates free functions (its
  // iterators' operator-) that a build which does not inline them exports
  // under our type's name (tests/abi_check.sh).
  using Job = std::pair<std::function<void()>, std::set<std::string>>;
  void Loop();
  void SettleLocked(const std::string& blob);  // under mu_

  mutable std::mutex mu_;
  LatencyHistogram* lag_ = nullptr;
  std::multiset<std::chrono::steady_clock::time_point> submitted_;  // of jobs queued or running
  std::condition_variable wake_, idle_, settled_;
  std::deque<Job> jobs_;
  std::list<Job> running_;                // stable addresses while they run
  std::map<std::string, int> unsettled_;  // blob -> jobs queued or running that settle it
  size_t idle_threads_ = 0;
  size_t looping_ = 0;  // threads that reached Loop: Drain waits for every one started
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// What this store's finishing (background or inline) made of the intents it
// rewrote, for its next commit on the same rows; thread-safe.
class Rewrites {
 public:
  // The intent at `intent_etag` is now the plain version at `etag`, whose
  // handles (kSameAsMetadata) are `same_as` and whose entity body is `body`
  // (kept up to kBodyBytes: a commit that writes the row without reading
  // it then needs no read, issue 57 goal 5; its intent's condition, If-Match
  // `etag`, proves the body still the blob's).
  struct Rewrite {
    std::string intent_etag, etag, same_as;
    std::optional<std::string> body;
  };
  void Note(const std::string& blob, Rewrite rewrite);
  // The rewrite last noted for `blob`, if it is of the version `handle`
  // names (the intent's ETag, or one of the rewrite's handles: the same
  // version) and is still remembered (the last kRemembered); without its
  // body (LastWithBody has it), which a commit holding the rewrite's ETag
  // does not need.
  std::optional<Rewrite> Of(const std::string& blob, std::string_view handle) const;
  // The rewrite last noted for `blob` with its body, of whatever version;
  // it may be stale (another client wrote since): a condition on its ETag
  // finds that.
  std::optional<Rewrite> LastWithBody(const std::string& blob) const;

  static constexpr size_t kRemembered = 4096;
  static constexpr size_t kBodyBytes = 4096;           // a body longer is not kept
  static constexpr size_t kBodiesBytes = 1024 * 1024;  // all bodies kept, at most

 private:
  void ForgetOldestLocked();  // under mu_

  mutable std::mutex mu_;
  std::map<std::string, Rewrite> rewrites_;
  std::deque<std::string> order_;  // oldest first, to forget past kRemembered
  size_t bodies_bytes_ = 0;        // of the bodies in rewrites_
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_FINISHER_H_
