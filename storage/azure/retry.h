// SPDX-License-Identifier: Apache-2.0
// The retry budget in front of the Azure backend's pipeline
// (storage/azure/pipeline.h): which answers are worth another attempt, the
// waits between attempts (BackoffDelay, util/backoff.h, on the injected
// Clock), the operation's time budget and the caller's deadline, and what an
// operation learns of attempts that may have been applied.
#ifndef BLOBTABLE_STORAGE_AZURE_RETRY_H_
#define BLOBTABLE_STORAGE_AZURE_RETRY_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include "blobtable/clock.h"
#include "blobtable/retry.h"
#include "storage/azure/http_transport.h"
#include "storage/azure/pipeline.h"
#include "util/metrics.h"

namespace blobtable::internal {

// 408, 429, 500, 502, 503, 504 (Azure's throttling and transient answers).
bool IsRetryableHttpStatus(int http_status);

}  // namespace blobtable::internal

namespace blobtable::internal::azure {

// One storage request: how to build it (fresh for every attempt: date and
// signature change) and what to call it in the log.
struct Call {
  const char* op;         // for the log: "GET", "PUT", "LEASE-ACQUIRE", ...
  std::string_view blob;  // for the log
  std::function<HttpRequest()> build;
  // Not sent again after an attempt that may have been applied: a create
  // (If-None-Match *) re-sent after its blob was made and deleted since
  // would make it again (a completed queue item delivered anew).
  bool once_maybe_applied = false;
};

struct Outcome {
  Result<HttpResponse> response = Status::Internal("no attempt made");
  int attempts = 0;
  // An attempt before the last got no answer, or one that may mean it was
  // applied (500, 504): the last answer may be about our own earlier write.
  bool unseen = false;
};

// One operation's share of RetryPolicy::max_total: its attempts, the waits
// between them and its follow-up checks all count against it.
struct Budget {
  SteadyTime start;
  std::chrono::milliseconds slept{0};
  // A caller's deadline (ReadOptions::deadline): no attempt starts after
  // it, and an attempt's timeout is cut to what is left of it.
  std::optional<SteadyTime> deadline;
  // ReadOptions::has_fallback: a refused connection is not retried.
  bool give_up_if_refused = false;
};

// Whether an attempt that is about to be retried may have been applied:
// no answer (unless the request was never sent), or a timeout answer.
bool MayHaveBeenApplied(const Result<HttpResponse>& r);

// Sends a Call's attempts through the pipeline while the policy and the
// budget allow: retries what is worth retrying, each attempt with the
// request timeout cut to the caller's deadline.
class RetryBudgetPolicy {
 public:
  // `random` draws the jitter (RandomU64 unless a test fixes it); the
  // retries and the waits before them are counted in `metrics`.
  RetryBudgetPolicy(RetryPolicy policy, std::chrono::milliseconds request_timeout,
                    const Clock& clock, uint64_t (*random)() = nullptr,
                    MetricsRegistry& metrics = UnreadMetrics());

  // A budget starting now.
  Budget NewBudget(std::optional<SteadyTime> deadline = std::nullopt,
                   bool give_up_if_refused = false) const;
  // Sends `call`'s attempts through `next`. A follow-up (a check after
  // another request of the same operation) is sent only if a whole attempt
  // fits what is left of the budget.
  Outcome Send(const Call& call, Budget& budget, const NextHop& next, bool follow_up = false) const;

 private:
  std::chrono::milliseconds Spent(const Budget& b) const;
  bool Affords(const Budget& b, std::chrono::milliseconds wait) const;
  std::chrono::milliseconds AttemptTimeout(const Budget& b) const;
  // Whether another attempt may help: a retryable status, or no answer (but
  // a refused connection, for a caller with a fallback).
  bool Retryable(const Result<HttpResponse>& r, const Budget& b) const;

  RetryPolicy policy_;
  std::chrono::milliseconds request_timeout_;
  const Clock* clock_;
  uint64_t (*random_)();
  Counter& retries_;
  Counter& backoff_ns_;
};

}  // namespace blobtable::internal::azure

#endif  // BLOBTABLE_STORAGE_AZURE_RETRY_H_
