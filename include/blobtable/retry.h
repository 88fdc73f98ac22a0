// SPDX-License-Identifier: Apache-2.0
// RetryPolicy: how Table::Update and Store::RunTransaction retry an
// optimistic update that lost a race.
//
// Between attempts they wait with exponential backoff and full jitter: a
// random time in [0, min(max_delay, initial_delay * 2^(attempt-1))), on the
// store's Clock (StoreOptions::clock, so a fake clock moves instead of
// sleeping). They stop at max_attempts, or when the next wait would end past
// max_total from the first attempt, returning the last attempt's status.
// The same rule spaces Lock::Acquire's tries and the Azure backend's HTTP
// retries (StoreOptions::azure.retry, a RetryPolicy too).
//
// Thread-safety: a plain value.
#ifndef BLOBTABLE_RETRY_H_
#define BLOBTABLE_RETRY_H_

#include <chrono>

#include "blobtable/export.h"
#include "blobtable/status.h"

namespace blobtable {

struct RetryPolicy {
  // Attempts in all, the first included: 1..1000 (1: no retry).
  int max_attempts = 10;
  // The first wait's bound, and the bound no wait exceeds (0 <= initial <=
  // max).
  std::chrono::milliseconds initial_delay{10};
  std::chrono::milliseconds max_delay{1'000};
  // No attempt starts later than this after the first (>= 0).
  std::chrono::milliseconds max_total{30'000};
  // Also retry Unavailable. Off by default: the backend already retried the
  // request within StoreOptions::azure.retry (attempts and total time), and a
  // service that stayed away that long is better reported than waited for.
  bool retry_unavailable = false;

  // A single attempt.
  static RetryPolicy Once() {
    RetryPolicy p;
    p.max_attempts = 1;
    return p;
  }
};

// InvalidArgument naming the field if `policy` breaks a bound above.
BLOBTABLE_EXPORT Status ValidateRetryPolicy(const RetryPolicy& policy);

// True if the helpers retry `status` under `policy`: Status::IsRetryable()
// (Conflict, Busy, LockTimeout, LeaseLost), and Unavailable only with
// retry_unavailable. Never OutcomeUnknown.
BLOBTABLE_EXPORT bool RetriesOn(const Status& status, const RetryPolicy& policy);

}  // namespace blobtable

#endif  // BLOBTABLE_RETRY_H_
