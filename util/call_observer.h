// SPDX-License-Identifier: Apache-2.0
// A public call traced (StoreOptions::tracer) and, when it was slow, logged
// with where its time went (StoreOptions::slow_calls). A store with
// neither keeps no Observing, and its calls pay one branch.
#ifndef BLOBTABLE_UTIL_CALL_OBSERVER_H_
#define BLOBTABLE_UTIL_CALL_OBSERVER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "blobtable/clock.h"
#include "blobtable/status.h"
#include "blobtable/trace.h"
#include "util/call_context.h"
#include "util/macros.h"  // StatusOf

namespace blobtable::internal {

// What a store does with its calls beside counting them.
struct Observing {
  std::shared_ptr<Tracer> tracer;  // may be null
  // Calls that took at least this long go to `slow_log`; none: no call.
  std::optional<std::chrono::nanoseconds> slow_threshold;
  std::function<void(const std::string& line)> slow_log;
};

// The slow-call log's line: "blobtable: slow get on table orders: 812.4 ms,
// OK; 3 requests 805.1 ms, 2 retries, backoff 600.0 ms, lock waits 0.0 ms,
// finishing waits 0.0 ms". Names a table, never a key or a credential.
std::string SlowCallLine(std::string_view call, std::string_view table,
                         std::chrono::nanoseconds took, const Status& status,
                         const CallTally& tally);

// One call's span and tally, from construction to Ended().
class CallObserver {
 public:
  CallObserver(const Observing& observing, const Clock& clock, std::string_view call,
               std::string_view table);
  CallObserver(const CallObserver&) = delete;
  CallObserver& operator=(const CallObserver&) = delete;
  // Ended as Internal if Ended() was not called (an exception from a
  // user's function the call ran).
  ~CallObserver() {
    if (!ended_) Ended(Status::Internal("ended by an exception"));
  }
  void Ended(const Status& status);

 private:
  const Observing& observing_;
  const Clock& clock_;
  std::string_view call_, table_;
  SteadyTime t0_;
  CallTally tally_;
  CallTally* outer_tally_;
  Span span_;
  bool ended_ = false;
};

// Runs `fn`, a public call's body, observed as `call` on `table` (empty:
// none); only `fn` with no Observing or inside another public call (but
// in a user's function it runs: UserCode).
template <typename Fn>
auto Observed(const Observing* observing, const Clock& clock, std::string_view call,
              std::string_view table, Fn&& fn) {
  if (observing == nullptr || CurrentCall().depth > 0) return fn();
  CallObserver observer(*observing, clock, call, table);
  auto result = fn();  // a table call's Metered marks the thread as inside a call
  observer.Ended(StatusOf(result));
  return result;
}

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_CALL_OBSERVER_H_
