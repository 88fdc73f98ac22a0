// SPDX-License-Identifier: Apache-2.0
// BackoffDelay (util/backoff.h), the one backoff of the Azure backend's HTTP
// retries, Table::Update and Store::RunTransaction, and Lock::Acquire: full
// jitter below a doubling bound, capped, never overflowing.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>

#include "util/backoff.h"
#include "util/random.h"

namespace blobtable {
namespace {
using namespace internal;

using std::chrono::milliseconds;

RetryPolicy Policy(int64_t initial_ms, int64_t max_ms) {
  RetryPolicy p;
  p.initial_delay = milliseconds(initial_ms);
  p.max_delay = milliseconds(max_ms);
  return p;
}

TEST(Backoff, FullJitterBelowADoublingBound) {
  const RetryPolicy p = Policy(100, 1'000);
  // The bound before retry 1, 2, 3, ...: 100, 200, 400, 800, then 1000.
  const int64_t bounds[] = {100, 200, 400, 800, 1'000, 1'000, 1'000};
  for (uint64_t random : {uint64_t{0}, uint64_t{1}, uint64_t{7}, uint64_t{99}, uint64_t{12'345},
                          UINT64_MAX, RandomU64()}) {
    for (int retry = 1; retry <= 7; ++retry) {
      const int64_t bound = bounds[retry - 1];
      EXPECT_EQ(BackoffDelay(p, retry, random).count(), static_cast<int64_t>(random % bound))
          << "retry " << retry << " random " << random;
    }
  }
  EXPECT_EQ(BackoffDelay(p, 1, 99), milliseconds(99));  // just below the bound
  EXPECT_EQ(BackoffDelay(p, 1, 100), milliseconds(0));  // never the bound itself
}

TEST(Backoff, DrawsSpreadOverTheWholeRange) {
  const RetryPolicy p = Policy(100, 1'000);
  int64_t lowest = INT64_MAX, highest = 0, sum = 0;
  const int n = 10'000;
  for (int i = 0; i < n; ++i) {
    const int64_t d = BackoffDelay(p, 1, RandomU64()).count();
    lowest = std::min(lowest, d);
    highest = std::max(highest, d);
    sum += d;
  }
  EXPECT_LT(lowest, 5);
  EXPECT_GE(highest, 95);
  EXPECT_NEAR(static_cast<double>(sum) / n, 49.5, 3.0);
}

TEST(Backoff, LargeRetriesAndDelaysNeverOverflow) {
  const RetryPolicy p = Policy(1, 8'000);
  for (int retry : {14, 31, 32, 63, 64, 1'000, INT_MAX})
    EXPECT_LT(BackoffDelay(p, retry, UINT64_MAX - 1), milliseconds(8'000)) << retry;
  const RetryPolicy huge = Policy(INT64_MAX / 2, INT64_MAX);
  EXPECT_LT(BackoffDelay(huge, INT_MAX, UINT64_MAX), milliseconds(INT64_MAX));
  // Retry 0 or less waits as retry 1 does.
  EXPECT_EQ(BackoffDelay(Policy(100, 1'000), 0, 150), milliseconds(50));
  EXPECT_EQ(BackoffDelay(Policy(100, 1'000), -5, 150), milliseconds(50));
}

TEST(Backoff, AZeroOrInvertedPolicyStaysWithinItsCap) {
  EXPECT_EQ(BackoffDelay(Policy(0, 1'000), 3, 12'345), milliseconds(0));
  EXPECT_EQ(BackoffDelay(Policy(0, 0), 1, 12'345), milliseconds(0));
  // An initial delay above the cap (StoreOptions is not validated): the cap.
  EXPECT_EQ(BackoffDelay(Policy(5'000, 1'000), 1, 1'500), milliseconds(500));
}

}  // namespace
}  // namespace blobtable
