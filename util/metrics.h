// SPDX-License-Identifier: Apache-2.0
// The counting behind Store::Metrics (blobtable/metrics.h): counters and
// latency histograms that cost a relaxed atomic add or three, and the
// registry a store keeps them in, read as a snapshot.
//
// What counts holds a reference to its counter, taken once (when the store,
// its storage or its cache is made), so counting never looks anything up.
// Every family is described once, in the catalog (util/metric_catalog.h),
// which docs/observability.md lists name for name (tests/metrics_test.cc).
#ifndef BLOBTABLE_UTIL_METRICS_H_
#define BLOBTABLE_UTIL_METRICS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "blobtable/clock.h"
#include "blobtable/metrics.h"
#include "blobtable/status.h"

namespace blobtable::internal {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// Counting compiled out (BLOBTABLE_METRICS off, CMakeLists.txt): only to
// measure what counting costs; every count then stays 0.
#ifdef BLOBTABLE_NO_METRICS
inline constexpr bool kCounting = false;
#else
inline constexpr bool kCounting = true;
#endif

// A monotonic count. Thread-safe.
class Counter {
 public:
  void Add(uint64_t n = 1) {
    if constexpr (kCounting) value_.fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// Durations in fixed log-scale buckets, the same in every store and process
// (so histograms add up across them): upper bounds of 1 µs times powers of
// two, up to about 67 s, then +Inf. Thread-safe.
class LatencyHistogram {
 public:
  static constexpr int kBounds = 27;  // 1 µs .. 2^26 µs; bucket kBounds is +Inf
  // The upper bounds, in seconds.
  static const std::vector<double>& BoundsSeconds();

  void Record(std::chrono::nanoseconds d) {
    if constexpr (!kCounting) return;
    const uint64_t ns = d.count() > 0 ? static_cast<uint64_t>(d.count()) : 0;
    buckets_[BucketOf(ns)].fetch_add(1, std::memory_order_relaxed);
    sum_ns_.fetch_add(ns, std::memory_order_relaxed);
  }
  // Per-bucket counts (not cumulative), and the sum in seconds.
  std::array<uint64_t, kBounds + 1> Buckets() const;
  double SumSeconds() const;

  // The bucket of a duration: the first whose bound it does not exceed.
  static int BucketOf(uint64_t ns) {
    const uint64_t us = (ns + 999) / 1000;  // rounded up: 1.5 µs is over 1 µs
    if (us <= 1) return 0;
    const int b = 64 - __builtin_clzll(us - 1);  // ceil(log2(us))
    return b < kBounds ? b : kBounds;
  }

 private:
  std::array<std::atomic<uint64_t>, kBounds + 1> buckets_{};
  std::atomic<uint64_t> sum_ns_{0};
};

// What a family is (util/metric_catalog.h holds one of these per name).
struct MetricDef {
  const char* name;  // the unit's suffix included: "blobtable_operation_seconds"
  MetricType type;
  const char* unit;  // "seconds", "bytes", "" for a count
  const char* help;
  // Samples that never moved are left out of the snapshot: families told
  // apart by an outcome, so that a store does not list every code it
  // never met.
  bool hide_zero = false;
  // What a counter's count is worth in the family's unit (a counter of
  // nanoseconds in a family of seconds: 1e-9).
  double scale = 1;
};

// A store's metrics. Adding is thread-safe and meant for set-up (it takes a
// lock and allocates); what it returns lives as long as the registry.
// What storage last said, for Store::Health: when it last answered, and
// the last failure (no answer, a 5xx, refused credentials) and when. Times
// on the store's clock (Clock::Now), for people to read; thread-safe.
class StorageOutcomes {
 public:
  void Answered(TimePoint at);
  void Failed(const Status& failure, TimePoint at);
  struct Last {
    std::optional<TimePoint> answer_at, error_at;
    std::optional<Status> error;
    bool failed_last = false;  // the last outcome was the failure
  };
  Last last() const;

 private:
  mutable std::mutex mu_;
  Last last_;
};

class MetricsRegistry {
 public:
  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // A counter of family `def` with `labels`; the same one again for the same
  // family and labels.
  Counter& AddCounter(const MetricDef& def, MetricLabels labels = {});
  LatencyHistogram& AddHistogram(const MetricDef& def, MetricLabels labels = {});
  // A value read when a snapshot is taken (a gauge, or a counter kept
  // elsewhere, such as the cache's). `read` must stay callable as long as
  // the registry lives and be thread-safe.
  void AddReader(const MetricDef& def, MetricLabels labels, std::function<double()> read);
  // Several values, of one family or several, read at once (what a cache
  // directory or a data file holds: one read for all of them). A reader that
  // cannot read returns none: those samples are then absent.
  struct Reading {
    const MetricDef* def;
    MetricLabels labels;
    double value;
  };
  void AddReaders(std::function<std::vector<Reading>()> read);

  // Every family, its samples in the order they were added (but those
  // MetricDef::hide_zero leaves out).
  MetricsSnapshot Snapshot() const;

  // Reads every reader once and keeps what it read in its place, letting
  // go of what the readers held (a store closing: its cache, its data
  // file, which must close with it). Snapshots from then on show those
  // values as they were.
  void Freeze();

  // Kept beside the counts: the backend that counts its requests here
  // notes what they found.
  StorageOutcomes& storage_outcomes() { return outcomes_; }

 private:
  StorageOutcomes outcomes_;
  struct Entry;
  Entry& Slot(const MetricDef& def, MetricLabels labels);

  mutable std::mutex mu_;
  std::deque<Entry> entries_;  // stable addresses
  // The counters and histograms by family and labels: a store adds about
  // 200 as it opens, which a search of entries_ made quadratic.
  std::map<std::pair<const MetricDef*, MetricLabels>, Entry*> slots_;
};

// How many Status codes there are: a family told apart by outcome has a
// counter for each.
inline constexpr int kStatusCodes = static_cast<int>(Code::kOutcomeUnknown) + 1;
using CountersByCode = std::array<Counter*, kStatusCodes>;

// A counter of `def` for each Status code, labelled `labels` and code=NAME.
CountersByCode AddCountersByCode(MetricsRegistry& registry, const MetricDef& def,
                                 const MetricLabels& labels = {});

// The registry of whatever is made without a store's (a BlobStore opened
// alone, a cache in a tool): counts nobody reads.
MetricsRegistry& UnreadMetrics();

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_METRICS_H_
