// SPDX-License-Identifier: Apache-2.0
#include "util/call_observer.h"

#include <cstdio>

namespace blobtable::internal {

namespace {

std::string Ms(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f ms", static_cast<double>(ns) / 1e6);
  return text;
}

std::string SpanName(std::string_view call) { return "blobtable." + std::string(call); }

}  // namespace

std::string SlowCallLine(std::string_view call, std::string_view table,
                         std::chrono::nanoseconds took, const Status& status,
                         const CallTally& tally) {
  std::string line = "blobtable: slow " + std::string(call);
  if (!table.empty()) line += " on table " + std::string(table);
  line += ": " + Ms(took.count()) + ", " + std::string(CodeName(status.code())) + "; ";
  line += std::to_string(tally.requests.load()) + " requests " + Ms(tally.request_ns.load());
  line += ", " + std::to_string(tally.retries.load()) + " retries, backoff " +
          Ms(tally.backoff_ns.load());
  line += ", lock waits " + Ms(tally.lock_wait_ns.load());
  line += ", finishing waits " + Ms(tally.finish_wait_ns.load());
  return line;
}

CallObserver::CallObserver(const Observing& observing, const Clock& clock, std::string_view call,
                           std::string_view table)
    : observing_(observing),
      clock_(clock),
      call_(call),
      table_(table),
      t0_(clock.Steady()),
      outer_tally_(CurrentCall().tally) {
  if (observing_.slow_threshold) CurrentCall().tally = &tally_;
  if (!observing_.tracer) return;
  const std::string name = SpanName(call);
  if (table.empty())
    span_.Open(observing_.tracer.get(), name);
  else
    span_.Open(observing_.tracer.get(), name, {{"table", table}});
}

void CallObserver::Ended(const Status& status) {
  ended_ = true;
  span_.End(status);
  CurrentCall().tally = outer_tally_;
  const auto took = clock_.Steady() - t0_;
  if (observing_.slow_threshold && took >= *observing_.slow_threshold && observing_.slow_log)
    observing_.slow_log(SlowCallLine(call_, table_, took, status, tally_));
}

}  // namespace blobtable::internal
