// SPDX-License-Identifier: Apache-2.0
// A Tracer (blobtable/trace.h) that keeps every span it is given, for tests
// of what a store traces and how the spans nest.
#ifndef BLOBTABLE_TESTING_RECORDING_TRACER_H_
#define BLOBTABLE_TESTING_RECORDING_TRACER_H_

#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "blobtable/trace.h"

namespace blobtable::internal {

class RecordingTracer : public Tracer {
 public:
  struct Span {
    uint64_t id = 0, parent = 0;
    std::string name;
    std::map<std::string, std::string> attributes;  // at its start and its end
    bool ended = false;
    Code code = Code::kOk;
    std::thread::id thread;
  };

  uint64_t StartSpan(std::string_view name, uint64_t parent,
                     std::span<const SpanAttribute> attributes) override {
    std::lock_guard<std::mutex> lock(mu_);
    Span s;
    s.id = spans_.size() + 1;
    s.parent = parent;
    s.name = name;
    for (const SpanAttribute& a : attributes) s.attributes[std::string(a.key)] = a.value;
    s.thread = std::this_thread::get_id();
    spans_.push_back(std::move(s));
    return spans_.back().id;
  }
  void EndSpan(uint64_t span, const Status& status,
               std::span<const SpanAttribute> attributes) override {
    std::lock_guard<std::mutex> lock(mu_);
    Span& s = spans_.at(span - 1);
    if (s.ended || s.thread != std::this_thread::get_id()) misuse_ = true;
    s.ended = true;
    s.code = status.code();
    for (const SpanAttribute& a : attributes) s.attributes[std::string(a.key)] = a.value;
  }

  std::vector<Span> spans() const {
    std::lock_guard<std::mutex> lock(mu_);
    return spans_;
  }
  // Ended twice, or on another thread than it started on.
  bool misused() const {
    std::lock_guard<std::mutex> lock(mu_);
    return misuse_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Span> spans_;
  bool misuse_ = false;
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TESTING_RECORDING_TRACER_H_
