// SPDX-License-Identifier: Apache-2.0
// What the public call running on this thread is: how deep in metered calls,
// the trace span open (blobtable/trace.h) and the tally the slow-call log
// reads (StoreOptions::slow_calls). One thread-local for all three: a get
// pays one thread-local access, not three. ParallelFor (util/parallel.h)
// hands it to the threads it starts, so what they do counts for the call.
#ifndef BLOBTABLE_UTIL_CALL_CONTEXT_H_
#define BLOBTABLE_UTIL_CALL_CONTEXT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "blobtable/status.h"
#include "blobtable/trace.h"

namespace blobtable::internal {

// Where a call's time went beside its own work; added to from several
// threads (a query's parallel reads).
struct CallTally {
  std::atomic<uint64_t> requests{0}, retries{0};
  std::atomic<int64_t> request_ns{0}, backoff_ns{0}, lock_wait_ns{0}, finish_wait_ns{0};
};

struct ThreadCall {
  int depth = 0;             // metered public calls this thread is inside
  bool counted = false;      // the innermost is a counted call (not the library's own work)
  Tracer* tracer = nullptr;  // the innermost open span's tracer, or null
  uint64_t span = 0;         // that span, 0: none
  CallTally* tally = nullptr;
};

// This module's own; initial-exec: read at one fixed offset from the
// thread pointer, without a call to __tls_get_addr (a get's counting paid
// 33 instructions for it).
inline thread_local ThreadCall module_thread_call __attribute__((tls_model("initial-exec")));

// Where CurrentCall() reads: null, this module's own; set in a backend built
// as a module of its own (the Azure backend's shared library, which has a
// copy of this header's variables) to the library's, so that its requests
// count for the call and nest under its span.
using CallSource = ThreadCall& (*)();
inline std::atomic<CallSource> call_source{nullptr};

// The running thread's call, as the library that made the store sees it.
inline ThreadCall& CurrentCall() {
  if (CallSource source = call_source.load(std::memory_order_relaxed)) [[unlikely]]
    return source();
  return module_thread_call;
}
// This module's own (what a module hands another as its CallSource).
ThreadCall& ThisModulesCall();

// Adds `d` to the running call's tally field `field`, if it keeps one.
inline void Tally(std::atomic<int64_t> CallTally::*field, std::chrono::nanoseconds d) {
  if (CallTally* t = CurrentCall().tally)
    (t->*field).fetch_add(d.count(), std::memory_order_relaxed);
}
inline void TallyRequest(std::chrono::nanoseconds d) {
  if (CallTally* t = CurrentCall().tally) {
    t->requests.fetch_add(1, std::memory_order_relaxed);
    t->request_ns.fetch_add(d.count(), std::memory_order_relaxed);
  }
}

// Around a user's function that a public call runs (an Update's function,
// a Visit's or GetView's visitor): the calls it makes are the user's, each
// counted, traced (under the call's span) and logged as a call of its own,
// not as a part of the call that ran it, on this store or another.
class UserCode {
 public:
  UserCode() : saved_(CurrentCall()) {
    CurrentCall().depth = 0;
    CurrentCall().counted = false;
    CurrentCall().tally = nullptr;
  }
  UserCode(const UserCode&) = delete;
  UserCode& operator=(const UserCode&) = delete;
  ~UserCode() {
    CurrentCall().depth = saved_.depth;
    CurrentCall().counted = saved_.counted;
    CurrentCall().tally = saved_.tally;
  }

 private:
  ThreadCall saved_;
};

// Around the library's own use of public calls (an index build's queries
// and writes, a count's pages): they are the part of the call that makes
// them, not calls of their own.
class InternalWork {
 public:
  InternalWork() : counted_(CurrentCall().counted) {
    ++CurrentCall().depth;
    CurrentCall().counted = false;
  }
  InternalWork(const InternalWork&) = delete;
  InternalWork& operator=(const InternalWork&) = delete;
  ~InternalWork() {
    --CurrentCall().depth;
    CurrentCall().counted = counted_;
  }

 private:
  bool counted_;
};

// A tally of its own for the part of a call from construction to
// destruction (a commit's requests, counted for every commit), added to the
// call's tally, if it keeps one, as it ends.
class TallyScope {
 public:
  TallyScope() : outer_(CurrentCall().tally) { CurrentCall().tally = &own_; }
  TallyScope(const TallyScope&) = delete;
  TallyScope& operator=(const TallyScope&) = delete;
  ~TallyScope();
  const CallTally& tally() const { return own_; }

 private:
  CallTally own_;
  CallTally* outer_;
};

// A span (blobtable/trace.h), open from construction to End() (or the
// destructor, which ends it Internal: left by an exception) and the
// innermost of its thread meanwhile. With a null tracer, nothing: one
// branch.
class Span {
 public:
  Span() = default;
  Span(Tracer* tracer, std::string_view name,
       std::initializer_list<SpanAttribute> attributes = {}) {
    Open(tracer, name, attributes);
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  ~Span() {
    if (tracer_ != nullptr) End(Status::Internal("ended by an exception"));
  }

  // Opens it (a default-made Span, or one ended): nothing if `tracer` is null.
  void Open(Tracer* tracer, std::string_view name,
            std::initializer_list<SpanAttribute> attributes = {}) {
    if (tracer != nullptr) Start(tracer, name, attributes);
  }
  bool on() const { return tracer_ != nullptr; }
  // Kept until End, which passes them (strings copied).
  void Set(std::string_view key, std::string_view value);
  void End(const Status& status);

 private:
  void Start(Tracer* tracer, std::string_view name,
             std::initializer_list<SpanAttribute> attributes);

  Tracer* tracer_ = nullptr;
  uint64_t id_ = 0;
  Tracer* outer_tracer_ = nullptr;
  uint64_t outer_span_ = 0;
  std::vector<std::pair<std::string, std::string>> ended_with_;
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_CALL_CONTEXT_H_
