// SPDX-License-Identifier: Apache-2.0
// Traces: a hook a store calls as its work starts and ends
// (StoreOptions::tracer), to bridge to OpenTelemetry or any tracer
// (docs/observability.md#traces shows the bridge).
//
// The spans, nested as they run (docs/observability.md#traces):
//   blobtable.<call>          a public call: get, insert, replace, merge,
//                             upsert, upsert_merge, delete, query,
//                             index_query, update, commit, recover,
//                             create_index, drop_index, check_index,
//                             drop_table, count, delete_where (a call a
//                             user's function makes: under the call that
//                             ran it)
//     blobtable.commit        a commit inside a call (a write to a table
//                             with indexes, an index build)
//     blobtable.commit.round  a step of a commit ("round": acquire,
//                             prewrite, commit_point; the embedded store's
//                             batch)
//       blobtable.request     a storage request (Azure: each HTTP attempt)
//   blobtable.finish          the background finishing of a committed
//                             transaction (a root span: its commit returned)
// A request made outside any span (a background renewal, an index drop) is
// a root span of its own.
#ifndef BLOBTABLE_TRACE_H_
#define BLOBTABLE_TRACE_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "blobtable/status.h"

namespace blobtable {

// An attribute of a span; the views are valid only during the call that
// passes them.
struct SpanAttribute {
  std::string_view key;
  std::string_view value;
};

// Called by a store's threads as spans start and end: from several threads
// at once, so it must be thread-safe; it must not throw nor call the store.
class Tracer {
 public:
  virtual ~Tracer() = default;
  // A span starts, on the thread that runs it. `parent`: what StartSpan
  // returned for the span enclosing it, or 0 for none. Returns the new
  // span's id, which must not be 0 (any other value the tracer likes: an
  // index into its own table, a pointer).
  virtual uint64_t StartSpan(std::string_view name, uint64_t parent,
                             std::span<const SpanAttribute> attributes) = 0;
  // The span `span` ended, on the thread that started it, with its outcome
  // and what was learnt meanwhile (a request's ids and HTTP status). Called
  // once for each StartSpan.
  virtual void EndSpan(uint64_t span, const Status& status,
                       std::span<const SpanAttribute> attributes) = 0;
};

}  // namespace blobtable

#endif  // BLOBTABLE_TRACE_H_
