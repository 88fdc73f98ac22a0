// SPDX-License-Identifier: Apache-2.0
// The loop behind Table::Update and Store::RunTransaction: run an attempt,
// and run it again after a backoff while the policy retries its status.
#ifndef BLOBTABLE_KV_RETRY_LOOP_H_
#define BLOBTABLE_KV_RETRY_LOOP_H_

#include <chrono>
#include <string>

#include "blobtable/options.h"
#include "blobtable/retry.h"
#include "blobtable/status.h"
#include "util/backoff.h"
#include "util/macros.h"
#include "util/random.h"

namespace blobtable::internal {

// Calls attempt(&final) until it succeeds, sets `final` (an answer not to
// retry, whatever its code), returns a status `policy` does not retry, or
// the policy runs out (attempts, or max_total on `clock`'s steady time).
// *attempts (if given) is the number of calls made. A retryable failure
// that ran the policy out says so in its message.
template <typename Attempt>
auto WithRetries(const Clock& clock, const RetryPolicy& policy, int* attempts, Attempt&& attempt)
    -> decltype(attempt(static_cast<bool*>(nullptr))) {
  const SteadyTime start = clock.Steady();
  for (int n = 1;; ++n) {
    if (attempts != nullptr) *attempts = n;
    bool final = false;
    auto r = attempt(&final);
    const Status& s = StatusOf(r);
    if (s.ok() || final || !RetriesOn(s, policy)) return r;
    const std::chrono::milliseconds wait = BackoffDelay(policy, n, RandomU64());
    const bool out_of_attempts = n >= policy.max_attempts;
    if (out_of_attempts || clock.Steady() + wait - start > policy.max_total) {
      if (n == 1) return r;
      return s.WithContext("gave up after " + std::to_string(n) + " attempts (RetryPolicy::" +
                           (out_of_attempts ? "max_attempts" : "max_total") + ")");
    }
    clock.SleepFor(wait);
  }
}

}  // namespace blobtable::internal

#endif  // BLOBTABLE_KV_RETRY_LOOP_H_
