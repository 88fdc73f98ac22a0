// SPDX-License-Identifier: Apache-2.0
// LeaderElection: at most one leader among the clients campaigning for a
// name, with a term (a fencing token) that grows with every new leader.
//
//   auto election = blobtable::LeaderElection::Start(*store, "scheduler");
//   if ((*election)->WaitForLeadership(std::chrono::seconds(60))) {
//     while ((*election)->is_leader()) { ... FencedUpdate(..., (*election)->term(), ...) ... }
//   }
//
// A leader holds the lease of the blob c/leaders/-<name>
// (docs/coordination.md#coordination), taken and renewed as a Lock's: the term is that lock's
// fencing token. Start() campaigns on a background thread: it tries to take
// the lease, and while someone else leads, tries again after a random wait
// of 100..1000 ms. A leader stays leader until it resigns or its lease is
// lost (renewal refused, or storage unreachable for longer than the lease
// allows); then it steps down, calls on_change, and campaigns again (unless
// it resigned).
//
// No two leaders with overlapping terms: is_leader() turns false as soon as
// this process's own monotonic clock says its lease may have lapsed, which
// is before storage lets another campaigner in; and a leader that was
// paused past its lease and acts before it looks is stopped at its writes
// by its term (FencedUpdate).
//
// Threading: one campaign thread per LeaderElection, which also calls
// on_change (keep it short; it must not destroy the election). is_leader(),
// term() and WaitForLeadership() may be called from any thread. After
// fork() the child is not leader and does not campaign. A process that
// exits while leading leaves the lease to run out (lease_seconds).
#ifndef BLOBTABLE_LEADER_H_
#define BLOBTABLE_LEADER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "blobtable/export.h"
#include "blobtable/lock.h"
#include "blobtable/status.h"

namespace blobtable {

class Store;

struct LeaderOptions {
  // The leader's lease, 15..60 s: how long a dead leader blocks a new one.
  int lease_seconds = 30;
  // How this campaigner is known (LeaderInfo::identity); empty: "<host>:<pid>".
  std::string identity;
  // Called on the campaign thread when this client becomes leader (true,
  // its term) and when it loses leadership (false, the term it had); not
  // for Resign, whose caller knows.
  std::function<void(bool leader, int64_t term)> on_change;
};

// Who leads `name` now, as its blob says (LeaderElection::Current).
struct LeaderInfo {
  bool elected = false;  // a leader's lease is held now
  std::string identity;  // the last leader's
  int64_t term = 0;      // the last leader's term (0: never elected)
};

class BLOBTABLE_EXPORT LeaderElection {
 public:
  // Starts campaigning for `name` (1..256 bytes of UTF-8). The store must
  // outlive the election. InvalidArgument for a bad name or options.
  static Result<std::unique_ptr<LeaderElection>> Start(const Store& store, std::string_view name,
                                                       const LeaderOptions& options = {});
  // One request: who leads now, and the last term.
  static Result<LeaderInfo> Current(const Store& store, std::string_view name);

  ~LeaderElection();  // Resign()
  LeaderElection(const LeaderElection&) = delete;
  LeaderElection& operator=(const LeaderElection&) = delete;

  // True while this client leads (see the header comment for when it
  // turns false).
  bool is_leader() const;
  // The current term while leader; 0 otherwise.
  int64_t term() const;
  // Waits up to `timeout` (real time) to be leader; true if it is.
  bool WaitForLeadership(std::chrono::milliseconds timeout) const;
  // Why leadership was last lost (OK if never lost).
  Status last_loss() const;
  // The Lock::expiry() of the current term's lease, or of the last term's
  // once it ended: a leader that steps down (is_leader() false) does not
  // release its lease, so no other campaigner leads before this. Until the
  // first term: SteadyTime{}.
  SteadyTime lease_expiry() const;

  // Steps down if leading (releases the lease: another campaigner may lead
  // at once) and stops campaigning. Idempotent.
  Status Resign();

  struct State;  // internal

 private:
  explicit LeaderElection(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace blobtable

#endif  // BLOBTABLE_LEADER_H_
