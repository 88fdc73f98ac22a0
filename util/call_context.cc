// SPDX-License-Identifier: Apache-2.0
#include "util/call_context.h"

namespace blobtable::internal {

ThreadCall& ThisModulesCall() { return module_thread_call; }

TallyScope::~TallyScope() {
  CurrentCall().tally = outer_;
  if (outer_ == nullptr) return;
  outer_->requests += own_.requests.load();
  outer_->retries += own_.retries.load();
  outer_->request_ns += own_.request_ns.load();
  outer_->backoff_ns += own_.backoff_ns.load();
  outer_->lock_wait_ns += own_.lock_wait_ns.load();
  outer_->finish_wait_ns += own_.finish_wait_ns.load();
}

void Span::Start(Tracer* tracer, std::string_view name,
                 std::initializer_list<SpanAttribute> attributes) {
  tracer_ = tracer;
  ended_with_.clear();
  outer_tracer_ = CurrentCall().tracer;
  outer_span_ = CurrentCall().span;
  // A span of another tracer (a store's call inside another store's
  // tracer's span) is not this one's parent.
  const uint64_t parent = outer_tracer_ == tracer_ ? outer_span_ : 0;
  id_ = tracer_->StartSpan(name, parent, {attributes.begin(), attributes.size()});
  CurrentCall().tracer = tracer_;
  CurrentCall().span = id_;
}

void Span::Set(std::string_view key, std::string_view value) {
  if (tracer_ != nullptr) ended_with_.emplace_back(key, value);
}

void Span::End(const Status& status) {
  if (tracer_ == nullptr) return;
  std::vector<SpanAttribute> attributes;
  attributes.reserve(ended_with_.size());
  for (const auto& [key, value] : ended_with_) attributes.push_back({key, value});
  Tracer* tracer = tracer_;
  tracer_ = nullptr;
  CurrentCall().tracer = outer_tracer_;
  CurrentCall().span = outer_span_;
  tracer->EndSpan(id_, status, attributes);
}

}  // namespace blobtable::internal
