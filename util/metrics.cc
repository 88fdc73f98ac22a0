// SPDX-License-Identifier: Apache-2.0
// Counters, histograms and the registry behind Store::Metrics
// (util/metrics.h), and the snapshot's lookups (blobtable/metrics.h).
#include "util/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

namespace blobtable::internal {

const std::vector<double>& LatencyHistogram::BoundsSeconds() {
  static const std::vector<double> bounds = [] {
    std::vector<double> b;
    for (int i = 0; i < kBounds; ++i) b.push_back(std::ldexp(1e-6, i));
    return b;
  }();
  return bounds;
}

std::array<uint64_t, LatencyHistogram::kBounds + 1> LatencyHistogram::Buckets() const {
  std::array<uint64_t, kBounds + 1> out{};
  for (size_t i = 0; i < out.size(); ++i) out[i] = buckets_[i].load(std::memory_order_relaxed);
  return out;
}

double LatencyHistogram::SumSeconds() const {
  return static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
}

struct MetricsRegistry::Entry {
  const MetricDef* def = nullptr;
  MetricLabels labels;
  Counter counter;
  std::unique_ptr<LatencyHistogram> histogram;
  std::function<double()> read;
  std::function<std::vector<Reading>()> read_many;
};

void StorageOutcomes::Answered(TimePoint at) {
  std::lock_guard<std::mutex> lock(mu_);
  last_.answer_at = at;
  last_.failed_last = false;
}

void StorageOutcomes::Failed(const Status& failure, TimePoint at) {
  std::lock_guard<std::mutex> lock(mu_);
  last_.error = failure;
  last_.error_at = at;
  last_.failed_last = true;
}

StorageOutcomes::Last StorageOutcomes::last() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_;
}

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

MetricsRegistry::Entry& MetricsRegistry::Slot(const MetricDef& def, MetricLabels labels) {
  auto [it, fresh] = slots_.try_emplace({&def, labels}, nullptr);
  if (!fresh) return *it->second;
  Entry& e = entries_.emplace_back();
  e.def = &def;
  e.labels = std::move(labels);
  it->second = &e;
  return e;
}

Counter& MetricsRegistry::AddCounter(const MetricDef& def, MetricLabels labels) {
  std::lock_guard<std::mutex> lock(mu_);
  return Slot(def, std::move(labels)).counter;
}

LatencyHistogram& MetricsRegistry::AddHistogram(const MetricDef& def, MetricLabels labels) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = Slot(def, std::move(labels));
  if (!e.histogram) e.histogram = std::make_unique<LatencyHistogram>();
  return *e.histogram;
}

void MetricsRegistry::AddReader(const MetricDef& def, MetricLabels labels,
                                std::function<double()> read) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = entries_.emplace_back();
  e.def = &def;
  e.labels = std::move(labels);
  e.read = std::move(read);
}

void MetricsRegistry::AddReaders(std::function<std::vector<Reading>()> read) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.emplace_back().read_many = std::move(read);  // of no one family: def stays null
}

namespace {

MetricFamily& FamilyOf(std::map<std::string_view, MetricFamily>& families, const MetricDef& def) {
  auto [it, fresh] = families.try_emplace(def.name);
  if (fresh) {
    it->second.name = def.name;
    it->second.type = def.type;
    it->second.unit = def.unit;
    it->second.help = def.help;
    if (def.type == MetricType::kHistogram) it->second.bounds = LatencyHistogram::BoundsSeconds();
  }
  return it->second;
}

void AddSample(MetricFamily& family, const MetricDef& def, MetricLabels labels, double value) {
  if (def.hide_zero && value == 0) return;
  family.samples.push_back(MetricSample{std::move(labels), value, {}});
}

}  // namespace

MetricsSnapshot MetricsRegistry::Snapshot() const {
  std::map<std::string_view, MetricFamily> families;
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (e.read_many) {
      for (Reading& r : e.read_many())
        AddSample(FamilyOf(families, *r.def), *r.def, std::move(r.labels), r.value);
      continue;
    }
    MetricFamily& family = FamilyOf(families, *e.def);
    if (e.read) {
      AddSample(family, *e.def, e.labels, e.read());
    } else if (e.histogram) {
      const auto per_bucket = e.histogram->Buckets();
      MetricSample sample{e.labels, e.histogram->SumSeconds(), {}};
      uint64_t total = 0;
      for (uint64_t n : per_bucket) sample.buckets.push_back(total += n);
      if (!e.def->hide_zero || total > 0) family.samples.push_back(std::move(sample));
    } else {
      AddSample(family, *e.def, e.labels, static_cast<double>(e.counter.Value()) * e.def->scale);
    }
  }
  MetricsSnapshot out;
  for (auto& [name, family] : families) out.families.push_back(std::move(family));
  return out;
}

void MetricsRegistry::Freeze() {
  std::lock_guard<std::mutex> lock(mu_);
  for (Entry& e : entries_) {
    if (e.read_many) {
      e.read_many = [values = e.read_many()] { return values; };
    } else if (e.read) {
      e.read = [value = e.read()] { return value; };
    }
  }
}

CountersByCode AddCountersByCode(MetricsRegistry& registry, const MetricDef& def,
                                 const MetricLabels& labels) {
  CountersByCode out{};
  for (int code = 0; code < kStatusCodes; ++code) {
    MetricLabels with_code = labels;
    with_code.emplace_back("code", std::string(CodeName(static_cast<Code>(code))));
    out[code] = &registry.AddCounter(def, std::move(with_code));
  }
  return out;
}

MetricsRegistry& UnreadMetrics() {
  static MetricsRegistry* unread = new MetricsRegistry();  // never destroyed: used at exit
  return *unread;
}

}  // namespace blobtable::internal

namespace blobtable {

namespace {

bool Carries(const MetricSample& sample,
             const std::vector<std::pair<std::string_view, std::string_view>>& labels) {
  for (const auto& wanted : labels) {
    auto it = std::find_if(sample.labels.begin(), sample.labels.end(),
                           [&](const auto& l) { return l.first == wanted.first; });
    if (it == sample.labels.end() || it->second != wanted.second) return false;
  }
  return true;
}

}  // namespace

const MetricFamily* MetricsSnapshot::Find(std::string_view name) const {
  for (const MetricFamily& f : families)
    if (f.name == name) return &f;
  return nullptr;
}

namespace {

using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

// The sum over the samples of `family` (may be null) that carry `labels` of
// what `of` takes from each.
template <typename T, typename Of>
T SumOver(const MetricFamily* family, const Labels& labels, Of of) {
  T sum = 0;
  if (family != nullptr)
    for (const MetricSample& s : family->samples)
      if (Carries(s, labels)) sum += of(s);
  return sum;
}

}  // namespace

double MetricsSnapshot::Value(std::string_view name, const Labels& labels) const {
  return SumOver<double>(Find(name), labels, [](const MetricSample& s) { return s.value; });
}

uint64_t MetricsSnapshot::Count(std::string_view name, const Labels& labels) const {
  return SumOver<uint64_t>(Find(name), labels, [](const MetricSample& s) {
    return s.buckets.empty() ? uint64_t{0} : s.buckets.back();
  });
}

}  // namespace blobtable
