// SPDX-License-Identifier: Apache-2.0
// The Azure backend's retry budget (storage/azure/retry.h).
#include "storage/azure/retry.h"

#include <algorithm>
#include <string>

#include "storage/storage_errors.h"
#include "util/backoff.h"
#include "util/call_context.h"
#include "util/metric_catalog.h"
#include "util/random.h"

namespace blobtable::internal {

bool IsRetryableHttpStatus(int s) {
  return s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504;
}

}  // namespace blobtable::internal

namespace blobtable::internal::azure {

using std::chrono::milliseconds;

bool MayHaveBeenApplied(const Result<HttpResponse>& r) {
  if (!r.ok()) return r.status().storage_code() != kNotSent;
  return r->status == 500 || r->status == 504;
}

RetryBudgetPolicy::RetryBudgetPolicy(RetryPolicy policy, milliseconds request_timeout,
                                     const Clock& clock, uint64_t (*random)(),
                                     MetricsRegistry& metrics)
    : policy_(policy),
      request_timeout_(request_timeout),
      clock_(&clock),
      random_(random != nullptr ? random : &RandomU64),
      retries_(metrics.AddCounter(metric::kHttpRetries)),
      backoff_ns_(metrics.AddCounter(metric::kHttpBackoffSeconds)) {}

Budget RetryBudgetPolicy::NewBudget(std::optional<SteadyTime> deadline,
                                    bool give_up_if_refused) const {
  return Budget{clock_->Steady(), milliseconds(0), deadline, give_up_if_refused};
}

milliseconds RetryBudgetPolicy::Spent(const Budget& b) const {
  return std::max(std::chrono::duration_cast<milliseconds>(clock_->Steady() - b.start), b.slept);
}

// Whether another attempt, after `wait`, can finish within the budget.
bool RetryBudgetPolicy::Affords(const Budget& b, milliseconds wait) const {
  if (b.deadline && clock_->Steady() + wait >= *b.deadline) return false;
  return Spent(b) + wait + request_timeout_ <= policy_.max_total;
}

// The timeout of an attempt starting now: the request timeout, cut to
// what is left before the budget's deadline (zero: no time left).
milliseconds RetryBudgetPolicy::AttemptTimeout(const Budget& b) const {
  if (!b.deadline) return request_timeout_;
  auto left = std::chrono::duration_cast<milliseconds>(*b.deadline - clock_->Steady());
  return std::clamp(left, milliseconds(0), request_timeout_);
}

bool RetryBudgetPolicy::Retryable(const Result<HttpResponse>& r, const Budget& b) const {
  if (r.ok()) return IsRetryableHttpStatus(r->status);
  return r.status().IsUnavailable() &&
         !(b.give_up_if_refused && r.status().storage_code() == kNotSent);
}

Outcome RetryBudgetPolicy::Send(const Call& call, Budget& budget, const NextHop& next,
                                bool follow_up) const {
  Outcome out;
  if (follow_up && !Affords(budget, milliseconds(0))) {
    out.response =
        Status::Unavailable("no time left in the retry budget for " + std::string(call.op));
    return out;
  }
  for (int attempt = 1;; ++attempt) {
    HttpRequest request = call.build();
    request.timeout = AttemptTimeout(budget);
    if (request.timeout.count() == 0) {
      out.response = Status::Unavailable(std::string(call.op) + " '" + std::string(call.blob) +
                                         "': the caller's deadline passed before an attempt");
      break;
    }
    out.response = next.Send(request, Attempt{call.op, call.blob, attempt});
    out.attempts = attempt;
    if (out.response.ok() && out.response->resent) out.unseen = true;  // the transport's own retry
    if (!Retryable(out.response, budget) || attempt >= policy_.max_attempts) break;
    if (call.once_maybe_applied && (out.unseen || MayHaveBeenApplied(out.response))) break;
    const milliseconds delay = BackoffDelay(policy_, attempt, random_());
    if (!Affords(budget, delay)) break;
    out.unseen = out.unseen || MayHaveBeenApplied(out.response);
    clock_->SleepFor(delay);
    budget.slept += delay;
    backoff_ns_.Add(static_cast<uint64_t>(std::chrono::nanoseconds(delay).count()));
    retries_.Add();
    Tally(&CallTally::backoff_ns, delay);  // the call's, for the slow-call log
    if (CallTally* t = CurrentCall().tally) t->retries.fetch_add(1, std::memory_order_relaxed);
  }
  return out;
}

}  // namespace blobtable::internal::azure
