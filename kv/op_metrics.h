// SPDX-License-Identifier: Apache-2.0
// The table API's calls counted and timed (Store::Metrics): by kind and
// outcome, each public call once, as itself (an Update is one "update", not
// also the get and the replace it makes; a Visit that pages through Query is
// one "query").
#ifndef BLOBTABLE_KV_OP_METRICS_H_
#define BLOBTABLE_KV_OP_METRICS_H_

#include <array>
#include <utility>

#include "blobtable/clock.h"
#include "blobtable/status.h"
#include "util/macros.h"  // StatusOf
#include "util/call_context.h"
#include "util/metrics.h"

namespace blobtable::internal {

enum class OpKind : int {
  kGet,
  kInsert,
  kReplace,
  kMerge,
  kUpsert,
  kUpsertMerge,
  kDelete,
  kQuery,  // a page (Query, Visit, a Scan's fetch)
  kIndexQuery,
  kUpdate,
};
inline constexpr int kOpKinds = 10;
// "get", "upsert_merge", ...: its label and its span's name.
const char* OpName(OpKind op);

class OpMetrics {
 public:
  explicit OpMetrics(MetricsRegistry& registry);

  void Record(OpKind op, Code code, std::chrono::nanoseconds took) {
    calls_[static_cast<int>(op)][static_cast<int>(code)]->Add();
    latency_[static_cast<int>(op)]->Record(took);
  }
  Counter& rows_returned() { return *rows_returned_; }
  Counter& rows_scanned() { return *rows_scanned_; }

 private:
  std::array<CountersByCode, kOpKinds> calls_{};
  std::array<LatencyHistogram*, kOpKinds> latency_{};
  Counter* rows_returned_;
  Counter* rows_scanned_;
};

// The coordination primitives' counters (coord/), kept with the store's.
class CoordMetrics {
 public:
  explicit CoordMetrics(MetricsRegistry& registry);
  void Acquired(Code code) { acquisitions_[static_cast<int>(code)]->Add(); }
  void Completed(Code code) { completions_[static_cast<int>(code)]->Add(); }
  Counter& locks_lost() { return *locks_lost_; }
  Counter& deliveries() { return *deliveries_; }
  Counter& dead_letters() { return *dead_letters_; }

 private:
  Counter *locks_lost_, *deliveries_, *dead_letters_;
  CountersByCode acquisitions_, completions_;
};

// The rows a call returned: a query page's entities, a visited page's rows.
template <typename R>
uint64_t RowsOf(const R& result) {
  if constexpr (requires { result->entities.size(); }) {
    return result.ok() ? result->entities.size() : 0;
  } else if constexpr (requires { result->rows; }) {
    return result.ok() ? static_cast<uint64_t>(result->rows) : 0;
  } else {
    return 0;
  }
}

// Metered's counting path: one object returned by name on its one return
// (a Result<Entity> moved costs a get a tenth of its instructions). `call`
// is this thread's (CurrentCall(), read once).
template <typename Fn>
auto MeteredNow(OpMetrics& metrics, const Clock& clock, OpKind op, ThreadCall& call, Fn& fn) {
  // Left as it was however fn ends; a call ended by an exception (thrown
  // by a user's function it called) is counted as Internal.
  struct Nested {
    OpMetrics& metrics;
    const Clock& clock;
    ThreadCall& call;
    OpKind op;
    SteadyTime t0;
    bool returned = false;
    ~Nested() {
      --call.depth;
      call.counted = false;
      if (!returned) metrics.Record(op, Code::kInternal, clock.Steady() - t0);
    }
  } nested{metrics, clock, call, op, clock.Steady()};
  ++call.depth;
  call.counted = true;  // what it reads counts (rows scanned)
  auto result = fn();
  nested.returned = true;
  metrics.Record(op, StatusOf(result).code(), clock.Steady() - nested.t0);
  if (const uint64_t rows = RowsOf(result); rows > 0) metrics.rows_returned().Add(rows);
  return result;
}

// Runs `fn` (a public call's body) and counts its outcome as `op`, unless
// it runs inside another metered call on this thread. `metrics` may be null
// (a Table not opened from a store): then it only runs `fn`.
template <typename Fn>
auto Metered(OpMetrics* metrics, const Clock* clock, OpKind op, Fn&& fn) {
  if (!kCounting || metrics == nullptr) return fn();
  ThreadCall& call = CurrentCall();
  if (call.depth > 0) return fn();
  return MeteredNow(*metrics, *clock, op, call, fn);
}

}  // namespace blobtable::internal

#endif  // BLOBTABLE_KV_OP_METRICS_H_
