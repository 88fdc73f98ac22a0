// SPDX-License-Identifier: Apache-2.0
// What a store counted (docs/observability.md): counters, gauges and latency
// histograms, always on, read as a snapshot (Store::Metrics) and written in
// the OpenMetrics text format that Prometheus scrapes (ToOpenMetrics).
//
// Counters only go up, from the store's opening (never reset: a scraper
// takes differences). Every name, label and unit is listed in
// docs/observability.md#metrics; times are in seconds and sizes in bytes,
// as OpenMetrics asks.
//
// Thread-safety: a snapshot is a plain value. Store::Metrics may be called
// from any thread, while the store is in use; each value in it is exact,
// but values are read one after another, not at one instant (a request
// counted between two reads shows in one and not the other).
#ifndef BLOBTABLE_METRICS_H_
#define BLOBTABLE_METRICS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blobtable/export.h"

namespace blobtable {

enum class MetricType { kCounter, kGauge, kHistogram };

// One labelled value of a family: blobtable_operations_total{op="get",code="OK"}.
struct MetricSample {
  std::vector<std::pair<std::string, std::string>> labels;  // in a fixed order
  // A counter's total or a gauge's value; a histogram's sum of observations.
  double value = 0;
  // Histograms only: how many observations fell at or under each bound of
  // the family's `bounds` (cumulative, as OpenMetrics writes them), the last
  // for +Inf, so `buckets.back()` is the number of observations.
  std::vector<uint64_t> buckets;
};

// Every sample of one metric name, with what it means.
struct MetricFamily {
  std::string name;  // without the type's suffix: "blobtable_operations"
  MetricType type = MetricType::kCounter;
  std::string unit;  // "seconds", "bytes", or empty for a count
  std::string help;  // one line
  // Histograms only: the buckets' upper bounds in the family's unit,
  // ascending, +Inf left out (it is always the last bucket).
  std::vector<double> bounds;
  std::vector<MetricSample> samples;
};

struct MetricsSnapshot {
  std::vector<MetricFamily> families;  // sorted by name

  // The family named `name`, or null.
  BLOBTABLE_EXPORT const MetricFamily* Find(std::string_view name) const;
  // The sum of the values of the samples of `name` that carry every label
  // of `labels` (none: all of them); 0 if there are none. A histogram's
  // value is its sum; Count() gives its number of observations.
  BLOBTABLE_EXPORT double Value(
      std::string_view name,
      const std::vector<std::pair<std::string_view, std::string_view>>& labels = {}) const;
  // The same, of a histogram's observation counts.
  BLOBTABLE_EXPORT uint64_t
  Count(std::string_view name,
        const std::vector<std::pair<std::string_view, std::string_view>>& labels = {}) const;
};

// The snapshot in the OpenMetrics text format
// (application/openmetrics-text; version=1.0.0), which Prometheus also reads:
// per family a "# TYPE", "# UNIT" and "# HELP" line, then its samples (a
// counter as NAME_total, a histogram as NAME_bucket{le=...}, NAME_count and
// NAME_sum), and "# EOF" at the end. Label values are escaped as the format
// asks.
BLOBTABLE_EXPORT std::string ToOpenMetrics(const MetricsSnapshot& snapshot);

}  // namespace blobtable

#endif  // BLOBTABLE_METRICS_H_
