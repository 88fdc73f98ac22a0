// SPDX-License-Identifier: Apache-2.0
// Which lock stripe a store's transaction takes (txn/lock_stripes.h).
#include "txn/lock_stripes.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>

#include "model/blob_naming.h"

namespace blobtable::internal {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kLock = "t/orders/l/-p";
const SteadyTime kNow = SteadyTime{} + seconds(100);

std::shared_ptr<LockStripes> Stripes() { return std::make_shared<LockStripes>(5); }

TEST(LockStripes, NamesTheFirstLockBlobAndNumberedStripes) {
  EXPECT_EQ(naming::LockStripeBlobName(kLock, 0), kLock);
  EXPECT_EQ(naming::LockStripeBlobName(kLock, 3), kLock + "/3");
  EXPECT_EQ(naming::LockStripeBlobName(kLock, 15), kLock + "/15");
}

TEST(LockStripes, AStripeLeasedBeforeIsTakenAgainBeforeANewOne) {
  auto stripes = Stripes();
  LockStripes::Claim a = stripes->Take(kLock, kNow, milliseconds(0));
  EXPECT_EQ(a.blob(), kLock + "/5");  // the store's first stripe
  LockStripes::Claim b = stripes->Take(kLock, kNow, milliseconds(0));
  EXPECT_EQ(b.blob(), kLock + "/6");  // a is held: the next
  b.NoteLeased();
  b.Release();
  // 6 was leased (its blob exists), 5 is held and 7 never used: 6 again.
  LockStripes::Claim c = stripes->Take(kLock, kNow, milliseconds(0));
  EXPECT_EQ(c.blob(), kLock + "/6");
}

TEST(LockStripes, AStripeBeingLetGoOfIsWaitedForRatherThanANewOneCreated) {
  auto stripes = Stripes();
  LockStripes::Claim a = stripes->Take(kLock, kNow, milliseconds(0));
  a.NoteLeased();
  a.NoteReleasing();
  std::string taken;
  std::thread next([&] { taken = stripes->Take(kLock, kNow, milliseconds(60'000)).blob(); });
  a.Release();  // before or after the Take started waiting: either way 5
  next.join();
  EXPECT_EQ(taken, kLock + "/5");
}

TEST(LockStripes, AStripeKeptWhileItsLeaseMayBeHeldIsSkippedUntilThen) {
  auto stripes = Stripes();
  LockStripes::Claim a = stripes->Take(kLock, kNow, milliseconds(0));
  a.NoteLeased();
  a.KeepUntil(kNow + seconds(30));  // its release failed
  EXPECT_EQ(stripes->Take(kLock, kNow, milliseconds(0)).blob(), kLock + "/6");
  EXPECT_EQ(stripes->Take(kLock, kNow + seconds(31), milliseconds(0)).blob(), kLock + "/5");
}

TEST(LockStripes, SixteenTransactionsHoldSixteenStripesThenShare) {
  auto stripes = Stripes();
  std::vector<LockStripes::Claim> held;
  std::set<std::string> blobs;
  for (int i = 0; i < kLockStripes; ++i) {
    held.push_back(stripes->Take(kLock, kNow, milliseconds(0)));
    blobs.insert(held.back().blob());
  }
  EXPECT_EQ(blobs.size(), static_cast<size_t>(kLockStripes));
  EXPECT_TRUE(blobs.count(kLock));  // stripe 0 is the partition's first lock blob
  // All held: the least held, from the store's first stripe on.
  EXPECT_EQ(stripes->Take(kLock, kNow, milliseconds(0)).blob(), kLock + "/5");
}

TEST(LockStripes, ALockNameWithNoRoomForASuffixKeepsToStripeZero) {
  auto stripes = Stripes();
  const std::string long_lock = "t/orders/l/-" + std::string(1010, 'k');
  LockStripes::Claim a = stripes->Take(long_lock, kNow, milliseconds(0));
  LockStripes::Claim b = stripes->Take(long_lock, kNow, milliseconds(0));
  EXPECT_EQ(a.blob(), long_lock);
  EXPECT_EQ(b.blob(), long_lock);  // shared: the lease makes them take turns
}

}  // namespace
}  // namespace blobtable::internal
