// SPDX-License-Identifier: Apache-2.0
// The lease state machine as pure functions (the conformance suite checks the
// same rules through a real store), and the storage-error -> Code mapping.
#include "storage/lease_rules.h"

#include <gtest/gtest.h>

#include "storage/storage_errors.h"

namespace blobtable::internal::lease {
namespace {

TEST(LeaseRules, FixedLeaseExpiresAtItsDuration) {
  LeaseRecord l;
  ASSERT_TRUE(Acquire(l, 15, "", "id-1", 1'000).ok());
  EXPECT_EQ(l.id, "id-1");
  Refresh(l, 15'999);
  EXPECT_EQ(l.state, LeaseState::kLeased);
  Refresh(l, 16'000);
  EXPECT_EQ(l.state, LeaseState::kExpired);
  EXPECT_EQ(StatusOf(l), LeaseStatus::kUnlocked);
  EXPECT_EQ(DurationOf(l), LeaseDurationType::kNone);
}

// K1 of docs/protocol.md: lease times are milliseconds since boot, tagged
// with the boot; a time of another boot has passed (a reboot, or a store
// that kept wall-clock instants: tag 0), an infinite lease stays.
TEST(LeaseRules, ALeaseOfAnotherBootHasRunOut) {
  const int64_t boot = BootTagOf("boot-a"), other = BootTagOf("boot-b");
  ASSERT_NE(boot, other);
  EXPECT_EQ(BootTagOf("boot-a"), boot) << "the same boot, the same tag, in every process";
  const int64_t now = LeaseNowMs(boot, std::chrono::seconds(100));
  EXPECT_LT(now, LeaseNowMs(boot, std::chrono::seconds(101)));
  LeaseRecord l;
  ASSERT_TRUE(Acquire(l, 15, "", "id", now).ok());
  Refresh(l, LeaseNowMs(boot, std::chrono::seconds(114)));
  EXPECT_EQ(l.state, LeaseState::kLeased);
  Refresh(l, LeaseNowMs(other, std::chrono::seconds(1)));  // after a reboot
  EXPECT_EQ(l.state, LeaseState::kExpired);
  LeaseRecord wall;  // kept by an older store: a wall-clock instant far "ahead"
  ASSERT_TRUE(Acquire(wall, 60, "", "id", 1'700'000'000'000).ok());
  Refresh(wall, now);
  EXPECT_EQ(wall.state, LeaseState::kExpired);
  LeaseRecord forever;
  ASSERT_TRUE(Acquire(forever, kInfiniteLease, "p", "", now).ok());
  Refresh(forever, LeaseNowMs(other, std::chrono::seconds(1)));
  EXPECT_EQ(forever.state, LeaseState::kLeased);
}

TEST(LeaseRules, InfiniteLeaseNeverExpires) {
  LeaseRecord l;
  ASSERT_TRUE(Acquire(l, kInfiniteLease, "p", "unused", 0).ok());
  EXPECT_EQ(l.id, "p");
  Refresh(l, INT64_MAX / 2);
  EXPECT_EQ(l.state, LeaseState::kLeased);
  EXPECT_EQ(DurationOf(l), LeaseDurationType::kInfinite);
}

TEST(LeaseRules, BreakingBecomesBrokenAtItsTime) {
  LeaseRecord l;
  ASSERT_TRUE(Acquire(l, 60, "a", "", 0).ok());
  int lease_time = -1;
  ASSERT_TRUE(Break(l, 10, 5'000, &lease_time).ok());
  EXPECT_EQ(lease_time, 10);
  EXPECT_EQ(StatusOf(l), LeaseStatus::kLocked);  // still locked while breaking
  Refresh(l, 14'999);
  EXPECT_EQ(l.state, LeaseState::kBreaking);
  Refresh(l, 15'000);
  EXPECT_EQ(l.state, LeaseState::kBroken);
}

TEST(LeaseRules, WriteWithoutIdClearsAnExpiredLease) {
  LeaseRecord l;
  ASSERT_TRUE(Acquire(l, 15, "a", "", 0).ok());
  EXPECT_EQ(CheckWrite(l, "a", 20'000).storage_code(), "LeaseLost");
  EXPECT_TRUE(CheckWrite(l, "", 20'000).ok());
  EXPECT_EQ(l.state, LeaseState::kAvailable);
  EXPECT_TRUE(l.id.empty());
}

TEST(LeaseRules, ArgumentValidation) {
  EXPECT_TRUE(ValidateDuration(15).ok());
  EXPECT_TRUE(ValidateDuration(60).ok());
  EXPECT_TRUE(ValidateDuration(kInfiniteLease).ok());
  EXPECT_FALSE(ValidateDuration(14).ok());
  EXPECT_FALSE(ValidateDuration(61).ok());
  EXPECT_TRUE(ValidateBreakPeriod(std::nullopt).ok());
  EXPECT_TRUE(ValidateBreakPeriod(0).ok());
  EXPECT_FALSE(ValidateBreakPeriod(-1).ok());
  EXPECT_FALSE(ValidateProposedId("has space").ok());
  EXPECT_FALSE(ValidateProposedId(std::string(65, 'a')).ok());
}

TEST(StorageErrors, CodesTellTheCallerWhatToDo) {
  EXPECT_EQ(CodeForStorageError(404, "BlobNotFound"), Code::kNotFound);
  EXPECT_EQ(CodeForStorageError(412, "ConditionNotMet"), Code::kConflict);
  EXPECT_EQ(CodeForStorageError(409, "BlobAlreadyExists"), Code::kConflict);
  EXPECT_EQ(CodeForStorageError(412, "LeaseIdMissing"), Code::kBusy);
  EXPECT_EQ(CodeForStorageError(409, "LeaseAlreadyPresent"), Code::kBusy);
  EXPECT_EQ(CodeForStorageError(412, "LeaseLost"), Code::kLeaseLost);
  EXPECT_EQ(CodeForStorageError(409, "LeaseIdMismatchWithLeaseOperation"), Code::kLeaseLost);
  EXPECT_EQ(CodeForStorageError(503, "ServerBusy"), Code::kUnavailable);
  EXPECT_EQ(CodeForStorageError(500, "OperationTimedOut"), Code::kUnavailable);
  EXPECT_EQ(CodeForStorageError(429, ""), Code::kUnavailable);
  EXPECT_EQ(CodeForStorageError(400, "InvalidHeaderValue"), Code::kInvalidArgument);
  Status s = StorageError(412, "LeaseIdMissing", "leased");
  EXPECT_EQ(s.ToString(), "Busy: leased [LeaseIdMissing, HTTP 412]");
}

}  // namespace
}  // namespace blobtable::internal::lease
