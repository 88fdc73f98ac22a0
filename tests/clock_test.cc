// SPDX-License-Identifier: Apache-2.0
// Clocks: every wait and timeout measures monotonic time, so setting the
// wall clock (an NTP step, an operator) neither stretches a wait past its
// timeout nor cuts it short; leases stay wall-clock instants
// (docs/backends.md#clocks). Local backend with the fake clock: Jump() moves the wall clock
// alone, a wait (SleepFor) moves both.
#include <gtest/gtest.h>

#include "blobtable/store.h"
#include "blobtable/txn.h"
#include "model/blob_naming.h"
#include "testing/fake_clock.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

using std::chrono::milliseconds;

class ClockJumpTest : public ::testing::TestWithParam<milliseconds> {
 protected:
  void SetUp() override {
    StoreOptions o;
    o.clock = &clock_;
    o.busy_timeout = std::chrono::seconds(2);
    clock_.set_sleep([this](milliseconds d) {
      if (waited_ == milliseconds(0)) clock_.Jump(GetParam());  // during the first wait
      clock_.Advance(d);
      waited_ += d;
    });
    auto store = Store::Open(dir_.path(), o);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    auto table = store_->OpenTable("orders");
    ASSERT_TRUE(table.ok());
    table_.emplace(*table);
    // Another client holds the entity for good: every writer waits.
    ASSERT_TRUE(table_->Upsert(Entity("p", "r")).ok());
    auto blob = internal::naming::EntityBlobName("orders", "p", "r");
    ASSERT_TRUE(blob.ok());
    ASSERT_TRUE(store_->blob_store().AcquireLease(*blob, -1, "", {}).ok());
  }

  TempDir dir_;
  FakeClock clock_;
  milliseconds waited_{0};
  std::unique_ptr<Store> store_;
  std::optional<Table> table_;
};

// The wait ends after busy_timeout of elapsed time: not an hour later when
// the wall clock stepped back an hour, not at once when it stepped forward.
TEST_P(ClockJumpTest, AWriteWaitsItsBusyTimeoutWhateverTheWallClockDoes) {
  auto upsert = table_->Upsert(Entity("p", "r"));
  EXPECT_EQ(upsert.status().code(), Code::kBusy) << upsert.status().ToString();
  EXPECT_GE(waited_, std::chrono::seconds(2));
  EXPECT_LE(waited_, std::chrono::seconds(2) + milliseconds(200));  // one backoff at most
}

TEST_P(ClockJumpTest, ATransactionWaitsItsLockTimeoutWhateverTheWallClockDoes) {
  TransactionOptions o;
  o.lock_timeout = std::chrono::seconds(2);
  auto txn = store_->Begin(o);
  ASSERT_TRUE(txn->Upsert(*table_, Entity("p", "r")).ok());
  auto commit = txn->Commit();
  EXPECT_EQ(commit.status().code(), Code::kLockTimeout) << commit.status().ToString();
  EXPECT_GE(waited_, std::chrono::seconds(2));
  EXPECT_LE(waited_, std::chrono::seconds(2) + milliseconds(200));
}

INSTANTIATE_TEST_SUITE_P(Steps, ClockJumpTest,
                         ::testing::Values(milliseconds(-3'600'000), milliseconds(3'600'000)),
                         [](const auto& info) {
                           return info.param.count() < 0 ? std::string("Backward")
                                                         : std::string("Forward");
                         });

// The tests' paced sleep (testing/fake_clock.h): a waiter moves the clock
// to the moment it was due to wake, never past a moment another waiter's
// wake-up already reached. Added up instead, two writers backing off while
// a killed build's child committed a page ran the clock past lock_timeout
// and the child's 30 s lease on a slow machine (CI, IndexTest).
TEST(FakeClockTest, WaitersSideBySideShareTimeRatherThanAddItUp) {
  internal::FakeClock clock;
  const SteadyTime start = clock.Steady();
  const TimePoint wall = clock.Now();
  clock.AdvanceTo(start + milliseconds(1000));  // the first waiter wakes
  clock.AdvanceTo(start + milliseconds(1000));  // one that slept beside it
  clock.AdvanceTo(start + milliseconds(400));   // a shorter one
  EXPECT_EQ(clock.Steady() - start, milliseconds(1000));
  EXPECT_EQ(clock.Now() - wall, milliseconds(1000));
  clock.AdvanceTo(start + milliseconds(1500));  // one that started later
  EXPECT_EQ(clock.Steady() - start, milliseconds(1500));
  EXPECT_EQ(clock.Now() - wall, milliseconds(1500));
  clock.SleepPaced(milliseconds(200), 1'000);  // a paced sleep moves it as long
  EXPECT_EQ(clock.Steady() - start, milliseconds(1700));
}

}  // namespace
}  // namespace blobtable::testing
