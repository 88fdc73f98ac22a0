// SPDX-License-Identifier: Apache-2.0
#include "tools/metrics_output.h"

#include <functional>
#include <mutex>
#include <ostream>
#include <vector>

namespace blobtable::cli {

namespace {

struct Noted {
  std::mutex mu;
  std::vector<std::function<MetricsSnapshot()>> sources;
};

Noted& Stores() {
  static Noted* noted = new Noted;  // never destroyed: a signal may come at exit
  return *noted;
}

}  // namespace

void NoteStoreOpened(const Store& store) {
  Noted& n = Stores();
  std::lock_guard<std::mutex> lock(n.mu);
  n.sources.push_back(store.MetricsSource());
}

void ForgetStores() {
  Noted& n = Stores();
  std::lock_guard<std::mutex> lock(n.mu);
  n.sources.clear();
}

void PrintMetrics(std::ostream& out) {
  Noted& n = Stores();
  std::lock_guard<std::mutex> lock(n.mu);  // one print at a time, whole
  for (const auto& source : n.sources) out << ToOpenMetrics(source());
  out.flush();
}

}  // namespace blobtable::cli
