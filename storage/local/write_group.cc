// SPDX-License-Identifier: Apache-2.0
#include "storage/local/write_group.h"

#include <exception>

#include "storage/local/lmdb_env.h"

namespace blobtable::internal {

namespace {

// A body's status; a throw (only std::bad_alloc is possible) becomes an
// error, so the leader always finishes its group.
Status RunBody(const WriteGroup::Body& body, MDB_txn* txn) {
  try {
    return body(txn);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("local store write: ") + e.what());
  }
}

// Bodies one commit carries at most: a bound on the transaction's size.
constexpr size_t kMaxGroup = 128;

}  // namespace

Status WriteGroup::Run(const Body& body) {
  Writer me{&body, Status::OK()};
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(&me);
  while (!me.done) {
    if (leading_) {
      done_.wait(lock);
      continue;
    }
    // Lead: take what is queued (this writer is among it, or was carried).
    leading_ = true;
    const size_t n = std::min(queue_.size(), kMaxGroup);
    std::vector<Writer*> group(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(n));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(n));
    lock.unlock();
    Commit(group);
    lock.lock();
    for (Writer* w : group) w->done = true;
    if (group.size() > 1) {
      ++stats_.groups;
      stats_.grouped_bodies += static_cast<int64_t>(group.size());
    }
    leading_ = false;
    done_.notify_all();
  }
  return me.result;
}

void WriteGroup::Commit(const std::vector<Writer*>& group) {
  auto txn = LmdbTxn::Begin(env_, /*read_only=*/false);
  if (!txn.ok()) {
    for (Writer* w : group) w->result = txn.status();
    return;
  }
  if (group.size() == 1) {
    Status s = RunBody(*group[0]->body, txn->get());
    group[0]->result = s.ok() ? txn->Commit() : s;  // else aborted with `txn`
    return;
  }
  std::vector<Writer*> carried;
  for (Writer* w : group) {
    MDB_txn* nested = nullptr;
    int rc = mdb_txn_begin(env_.env(), txn->get(), 0, &nested);
    if (rc != 0) {
      w->result = LmdbError(rc, "beginning a nested LMDB transaction");
      continue;
    }
    Status s = RunBody(*w->body, nested);
    if (!s.ok()) {
      mdb_txn_abort(nested);  // undoes this body alone
      w->result = s;
      continue;
    }
    if ((rc = mdb_txn_commit(nested)) != 0) {
      // Merging into the group's transaction failed (out of memory): what it
      // holds is in doubt, so nothing of it is committed.
      Status failed = LmdbError(rc, "committing a nested LMDB transaction");
      for (Writer* g : group)
        if (g->result.ok()) g->result = failed;
      return;
    }
    carried.push_back(w);
  }
  if (carried.empty()) return;  // every body failed: `txn` is aborted
  const Status committed = txn->Commit();
  for (Writer* w : carried) w->result = committed;
}

WriteGroup::Stats WriteGroup::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

size_t WriteGroup::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

}  // namespace blobtable::internal
