// SPDX-License-Identifier: Apache-2.0
// The one backoff function: how long to wait before a retry under a
// RetryPolicy. The Azure backend's HTTP retries (storage/azure/retry.h),
// Table::Update and Store::RunTransaction (kv/retry_loop.h) and
// Lock::Acquire (coord/lock.cc) all wait by it.
#ifndef BLOBTABLE_UTIL_BACKOFF_H_
#define BLOBTABLE_UTIL_BACKOFF_H_

#include <chrono>
#include <cstdint>

#include "blobtable/retry.h"

namespace blobtable::internal {

// The wait before retry `retry` (1: the wait after the first attempt, 2:
// after the second, ...): exponential backoff with full jitter, uniform in
// [0, d) with d = min(max_delay, initial_delay * 2^(retry-1)); 0 when d is 0.
// `random` supplies the jitter (RandomU64(); a fixed value in tests).
//
// Why full jitter, for every layer: it spreads clients that retry after the
// same event (a throttled account, a race lost to the same writer, waiters on
// one lock) the most evenly, which is what ends the contention soonest (of
// no, equal, full and decorrelated jitter, full jitter made the fewest calls
// and finished among the first in "Exponential Backoff And Jitter", AWS
// Architecture Blog, 2015); and it is what RetryPolicy, LockOptions and
// docs/azure.md promise. The bounds that matter hold whatever the draw: no
// wait reaches d, and max_attempts and max_total bound the retries, so short
// draws cannot make a storm. Its cost: a throttled service may be asked again
// sooner (a mean wait of d/2, where the HTTP retries' former [d/2, d] gave
// 3d/4).
std::chrono::milliseconds BackoffDelay(const RetryPolicy& policy, int retry, uint64_t random);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_BACKOFF_H_
