// SPDX-License-Identifier: Apache-2.0
// FaultInjectingBlobStore over the local backend: each fault does to
// storage what the real failure would and answers what a caller would see;
// a seed replays its faults.
#include <gtest/gtest.h>

#include "blobtable/fault_injection.h"
#include "blobtable/store.h"
#include "tests/test_util.h"
#include "testing/hooks.h"

namespace blobtable::testing {
namespace {

class FaultInjectionTest : public ::testing::Test {
 protected:
  void SetUp() override { storage_ = *OpenLocalBlobStore(dir_.path(), "faults", {}, &clock_); }
  // A wrapper that injects `fault` into every call (and logs it).
  std::shared_ptr<FaultInjectingBlobStore> Always(FaultRates rates, uint64_t seed = 1) {
    FaultOptions o;
    o.seed = seed;
    o.rates = rates;
    o.log = [this](const std::string& line) { log_.push_back(line); };
    return std::make_shared<FaultInjectingBlobStore>(storage_, o);
  }
  bool Exists(const std::string& name) { return storage_->Head(name, {}).ok(); }

  FakeClock clock_;
  TempDir dir_;
  std::shared_ptr<BlobStore> storage_;
  std::vector<std::string> log_;
};

TEST_F(FaultInjectionTest, ServerBusyAndResetBeforeDoNothing) {
  auto busy = Always({.server_busy = 1});
  auto put = busy->Put("a", "x", {});
  EXPECT_EQ(put.status().code(), Code::kUnavailable);
  EXPECT_EQ(put.status().http_status(), 503);
  EXPECT_EQ(put.status().storage_code(), "ServerBusy");
  EXPECT_FALSE(Exists("a"));
  auto refused = Always({.reset_before = 1});
  EXPECT_EQ(refused->Put("a", "x", {}).status().storage_code(), "NotSent");
  EXPECT_FALSE(Exists("a"));
  EXPECT_EQ(busy->injected(Fault::kServerBusy), 1u);
  EXPECT_EQ(refused->injected(), 1u);
}

TEST_F(FaultInjectionTest, ResetAfterAppliesTheWriteAndLosesTheAnswer) {
  auto lost = Always({.reset_after = 1});
  EXPECT_EQ(lost->Put("a", "x", {}).status().code(), Code::kOutcomeUnknown);
  EXPECT_TRUE(Exists("a"));
  EXPECT_EQ(lost->Delete("a", {}).code(), Code::kOutcomeUnknown);
  EXPECT_FALSE(Exists("a"));
  ASSERT_TRUE(storage_->Put("b", "x", {}).ok());
  EXPECT_EQ(lost->AcquireLease("b", 15, "", {}).status().code(), Code::kOutcomeUnknown);
  EXPECT_EQ(storage_->Head("b", {})->properties.lease_state, LeaseState::kLeased);
  // A read changes nothing: it is simply unavailable.
  EXPECT_EQ(lost->Get("b", {}).status().code(), Code::kUnavailable);
  EXPECT_EQ(lost->List({}).status().code(), Code::kUnavailable);
}

// Timeouts and 500s may or may not have been applied: the log says which,
// and storage agrees with it.
TEST_F(FaultInjectionTest, TimeoutsAndInternalErrorsApplyAsTheirLogSays) {
  auto faulty = Always({.internal_error = 2, .timeout = 1});
  int applied = 0, not_applied = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string name = "b" + std::to_string(i);
    log_.clear();
    auto put = faulty->Put(name, "x", {});
    ASSERT_EQ(put.status().code(), Code::kOutcomeUnknown);
    ASSERT_EQ(log_.size(), 1u);
    const bool said_applied = log_[0].find(" applied") != std::string::npos;
    EXPECT_EQ(Exists(name), said_applied) << log_[0];
    (said_applied ? applied : not_applied)++;
  }
  EXPECT_GT(applied, 0);
  EXPECT_GT(not_applied, 0);
  EXPECT_GT(faulty->injected(Fault::kInternalError), 0u);
  EXPECT_GT(faulty->injected(Fault::kTimeout), 0u);
  auto get = faulty->Get("b0", {});
  EXPECT_EQ(get.status().code(), Code::kUnavailable);
}

TEST_F(FaultInjectionTest, LeaseLostBreaksTheLeaseTheCallPresents) {
  ASSERT_TRUE(storage_->Put("l", "x", {}).ok());
  auto lease = storage_->AcquireLease("l", 30, "", {});
  ASSERT_TRUE(lease.ok());
  auto lossy = Always({.lease_lost = 1});
  EXPECT_TRUE(lossy->Get("l", {}).ok()) << "a call without a lease id meets no lease fault";
  PutOptions under;
  under.lease_id = lease->lease_id;
  EXPECT_EQ(lossy->Put("l", "y", under).status().code(), Code::kLeaseLost);
  EXPECT_EQ(storage_->Get("l", {})->data, "x");
  auto again = storage_->AcquireLease("l", 30, "", {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(lossy->RenewLease("l", again->lease_id, {}).status().code(), Code::kLeaseLost);
  EXPECT_EQ(lossy->injected(Fault::kLeaseLost), 2u);
}

TEST_F(FaultInjectionTest, ASeedReplaysItsFaultsAndRatesHoldOverManyCalls) {
  auto run = [&](uint64_t seed) {
    log_.clear();
    auto faulty = Always({.server_busy = 10, .reset_before = 10, .reset_after = 10}, seed);
    for (int i = 0; i < 3000; ++i) (void)faulty->Head("h" + std::to_string(i % 7), {});
    EXPECT_EQ(faulty->calls(), 3000u);
    EXPECT_GT(faulty->injected(), 600u);  // about 3 in 10
    EXPECT_LT(faulty->injected(), 1200u);
    return log_;
  };
  const std::vector<std::string> first = run(42);
  EXPECT_EQ(run(42), first);
  EXPECT_NE(run(43), first);
}

TEST_F(FaultInjectionTest, RatesPerKindOfCallAndAPassThroughWhenDisabled) {
  FaultOptions o;
  o.rates.server_busy = 1;
  o.per_op[BlobOp::kGet] = FaultRates{};  // reads unharmed
  auto faulty = std::make_shared<FaultInjectingBlobStore>(storage_, o);
  ASSERT_TRUE(storage_->Put("a", "x", {}).ok());
  EXPECT_TRUE(faulty->Get("a", {}).ok());
  EXPECT_FALSE(faulty->Head("a", {}).ok());
  faulty->set_enabled(false);
  EXPECT_TRUE(faulty->Head("a", {}).ok());
  EXPECT_TRUE(faulty->Put("c", "x", {}).ok());
  EXPECT_EQ(faulty->calls(), 2u);  // calls made while disabled are not numbered
}

// A transaction whose lease acquires all lose their answers (applied or
// not) fails before its commit point: nothing was committed, and it says
// so (Unavailable), never OutcomeUnknown, which would send the caller to
// settle what needs no settling.
TEST_F(FaultInjectionTest, ALostAnswerBeforeTheCommitPointMeansNothingWasCommitted) {
  FaultOptions o;
  o.per_op[BlobOp::kAcquireLease] = FaultRates{.reset_after = 1};
  auto faulty = std::make_shared<FaultInjectingBlobStore>(storage_, o);
  StoreOptions so;
  so.clock = &clock_;
  so = internal::WithAtomicCommits(so, false);  // the lease coordinator's steps are under test
  auto store = Store::FromBlobStore(faulty, so);
  auto table = *store->OpenTable("accounts");
  faulty->set_enabled(false);
  auto v1 = table.Insert(Entity("p", "a").Set("n", 1));
  ASSERT_TRUE(v1.ok());
  faulty->set_enabled(true);
  auto txn = store->Begin();
  ASSERT_TRUE(txn->Replace(table, Entity("p", "a").Set("n", 2), v1->etag()).ok());
  auto committed = txn->Commit();
  EXPECT_EQ(committed.status().code(), Code::kUnavailable) << committed.status().ToString();
  EXPECT_NE(committed.status().message().find("nothing was committed"), std::string::npos)
      << committed.status().ToString();
  faulty->set_enabled(false);
  auto a = table.Get("p", "a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(*a->FindAs<int32_t>("n"), 1);
}

}  // namespace
}  // namespace blobtable::testing
