// SPDX-License-Identifier: Apache-2.0
// Group commit for an LMDB environment: concurrent writers of one process
// share one durable write transaction.
//
// LMDB serializes write transactions, and each durable commit waits for the
// disk (two syncs). Alone, N writers pay N commits one after another. Here a
// writer queues its body; the first writer to find no commit in progress
// becomes the leader, takes every body queued so far (its own included), runs
// each in a nested transaction of one write transaction, commits that once,
// and hands each writer its own result. Writers arriving meanwhile queue for
// the next group. So:
// - a body sees the writes of the bodies before it in its group, and is
//   checked on its own: a body that fails leaves nothing behind and does not
//   fail the others (its nested transaction is aborted);
// - a writer's Run returns OK only after the group's commit returned, i.e.
//   once its writes are as durable as the environment's commits are;
// - a commit that fails fails every body it carried.
// A group of one runs its body in the write transaction itself (no nested
// transaction), as a lone writer always did.
//
// Thread-safety: Run may be called from any thread, concurrently. A body runs
// on the leader's thread, while its writer waits: it may use the writer's
// state, but must not call Run (the group would wait for itself) nor begin
// transactions. Writers of other processes are serialized by LMDB as before.
#ifndef BLOBTABLE_STORAGE_LOCAL_WRITE_GROUP_H_
#define BLOBTABLE_STORAGE_LOCAL_WRITE_GROUP_H_

#include <lmdb.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

#include "blobtable/status.h"

namespace blobtable::internal {

class LmdbEnv;

class WriteGroup {
 public:
  using Body = std::function<Status(MDB_txn*)>;

  explicit WriteGroup(LmdbEnv& env) : env_(env) {}
  WriteGroup(const WriteGroup&) = delete;
  WriteGroup& operator=(const WriteGroup&) = delete;

  // Runs `body` in a write transaction, committed durably with those of the
  // other writers waiting at the same time (see above). The body's error if
  // it failed (nothing of it was written); the commit's if that failed;
  // IOError if the transaction could not begin.
  Status Run(const Body& body);

  // How many commits carried more than one body, and how many bodies those
  // carried, since the environment opened (for tests and benchmarks).
  struct Stats {
    int64_t groups = 0;
    int64_t grouped_bodies = 0;
  };
  Stats stats() const;
  // Writers queued for the next group (tests wait for it).
  size_t waiting() const;

 private:
  struct Writer {
    const Body* body;
    Status result;
    bool done = false;
  };
  // Runs `group` in one transaction; sets each writer's result.
  void Commit(const std::vector<Writer*>& group);

  LmdbEnv& env_;
  mutable std::mutex mu_;
  std::condition_variable done_;
  std::vector<Writer*> queue_;  // waiting for the next group
  bool leading_ = false;        // a leader is running a group
  Stats stats_;
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_LOCAL_WRITE_GROUP_H_
