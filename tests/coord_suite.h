// SPDX-License-Identifier: Apache-2.0
// The coordination suite (see coord_suite.cc), run on every backend.
#ifndef BLOBTABLE_TESTS_COORD_SUITE_H_
#define BLOBTABLE_TESTS_COORD_SUITE_H_

#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "blobtable/counter.h"
#include "blobtable/leader.h"
#include "blobtable/lock.h"
#include "blobtable/queue.h"
#include "blobtable/store.h"
#include "blobtable/watch.h"
#include "tests/backend.h"
#include "tests/test_util.h"

namespace blobtable::testing {

class CoordTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override;
  // A store on the suite's container with `clock` (null: the real one).
  std::unique_ptr<Store> Open(Clock* clock) const;
  // Lets a lease of `lease_seconds` taken before now run out: the fake
  // clock moves past it; on a server, the next acquirer waits (Short()).
  void OutliveLease(int lease_seconds);
  // After OutliveLease(15): true once `e` leads, within `wait` of real
  // time a try. On the fake clock time moves only when the test moves it: a
  // campaign whose try spanned that move took the lease with 16 s gone
  // between its try and the answer, judged it lost at once (a stall past
  // its deadline) and let it run out by itself, which it does only as time
  // goes on; so time goes on here, a lease at a time (three tries).
  bool LeadsOnceTheLeaseRanOut(const LeaderElection& e, std::chrono::milliseconds wait);
  // A 15 s lease, and a timeout that waits out another's on a server.
  LockOptions Short() const;
  // A visible item of `q`, waiting (on a server) for a taken one's
  // visibility to run out; nullopt if none came.
  std::optional<QueueItem> DequeueWithin(const WorkQueue& q);

  internal::FakeClock clock_;  // shared with forked children
  StoreOptions options_;
  std::unique_ptr<Store> store_;
};

}  // namespace blobtable::testing

#endif  // BLOBTABLE_TESTS_COORD_SUITE_H_
