// SPDX-License-Identifier: Apache-2.0
// A metrics snapshot in the OpenMetrics text format (blobtable/metrics.h):
// https://github.com/OpenObservability/OpenMetrics/blob/main/specification/OpenMetrics.md
#include <charconv>
#include <string>

#include "blobtable/metrics.h"

namespace blobtable {

namespace {

// The shortest text that reads back as the same double; integers plainly.
void AppendNumber(std::string& out, double v) {
  char buf[32];
  auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  out.append(buf, end);
}

// A label value as the format quotes it: backslash, double quote and line
// feed escaped.
void AppendEscaped(std::string& out, const std::string& value) {
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
}

// {a="x",b="y"}, with `le` (a bucket's bound) last; nothing if no label.
void AppendLabels(std::string& out, const MetricSample& s, const std::string* le = nullptr) {
  if (s.labels.empty() && le == nullptr) return;
  out += '{';
  bool first = true;
  for (const auto& [name, value] : s.labels) {
    if (!first) out += ',';
    first = false;
    out += name;
    out += "=\"";
    AppendEscaped(out, value);
    out += '"';
  }
  if (le != nullptr) {
    if (!first) out += ',';
    out += "le=\"" + *le + "\"";
  }
  out += '}';
}

const char* TypeName(MetricType t) {
  switch (t) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
  }
  return "unknown";
}

void AppendHistogram(std::string& out, const MetricFamily& f, const MetricSample& s) {
  for (size_t i = 0; i < s.buckets.size(); ++i) {
    std::string le = "+Inf";
    if (i < f.bounds.size()) {
      le.clear();
      AppendNumber(le, f.bounds[i]);
    }
    out += f.name + "_bucket";
    AppendLabels(out, s, &le);
    out += ' ' + std::to_string(s.buckets[i]) + '\n';
  }
  out += f.name + "_count";
  AppendLabels(out, s);
  out += ' ' + std::to_string(s.buckets.empty() ? 0 : s.buckets.back()) + '\n';
  out += f.name + "_sum";
  AppendLabels(out, s);
  out += ' ';
  AppendNumber(out, s.value);
  out += '\n';
}

}  // namespace

std::string ToOpenMetrics(const MetricsSnapshot& snapshot) {
  std::string out;
  for (const MetricFamily& f : snapshot.families) {
    out += "# TYPE " + f.name + ' ' + TypeName(f.type) + '\n';
    if (!f.unit.empty()) out += "# UNIT " + f.name + ' ' + f.unit + '\n';
    out += "# HELP " + f.name + ' ';
    AppendEscaped(out, f.help);
    out += '\n';
    for (const MetricSample& s : f.samples) {
      if (f.type == MetricType::kHistogram) {
        AppendHistogram(out, f, s);
        continue;
      }
      out += f.name;
      if (f.type == MetricType::kCounter) out += "_total";
      AppendLabels(out, s);
      out += ' ';
      AppendNumber(out, s.value);
      out += '\n';
    }
  }
  out += "# EOF\n";
  return out;
}

}  // namespace blobtable
