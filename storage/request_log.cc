// SPDX-License-Identifier: Apache-2.0
#include "storage/request_log.h"

#include <chrono>
#include <cstdio>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/macros.h"

namespace blobtable::internal {

std::string RequestLogLine(std::string_view op, std::string_view blob, std::string_view outcome,
                           double ms, int attempt) {
  char ms_text[32];
  snprintf(ms_text, sizeof(ms_text), "%.1f", ms);
  std::string line = "blobtable: ";
  line.append(op).append(" ").append(blob).append(" -> ").append(outcome);
  line.append(" ").append(ms_text).append(" ms attempt ").append(std::to_string(attempt));
  return line;
}

namespace {

using internal::StatusOf;  // util/macros.h: Status and Result<T>
const Status& StatusOf(const BatchResult& b) { return b.status; }

// "ok", or the code's name and the service's error code if it gave one.
std::string Outcome(const Status& s) {
  if (s.ok()) return "ok";
  std::string outcome(CodeName(s.code()));
  if (!s.storage_code().empty()) outcome += " " + s.storage_code();
  return outcome;
}

class LoggingBlobStore final : public BlobStoreWrapper {
 public:
  LoggingBlobStore(std::shared_ptr<BlobStore> target, RequestLogSink log, const Clock& clock)
      : BlobStoreWrapper(std::move(target)), log_(std::move(log)), clock_(&clock) {}

  Result<GetResult> Get(std::string_view n, const ReadOptions& o) override {
    return Log("GET", n, [&] { return BlobStoreWrapper::Get(n, o); });
  }
  Result<GetResult> Head(std::string_view n, const AccessConditions& c) override {
    return Log("HEAD", n, [&] { return BlobStoreWrapper::Head(n, c); });
  }
  Result<WriteResult> Put(std::string_view n, std::string_view d, const PutOptions& o) override {
    return Log("PUT", n, [&] { return BlobStoreWrapper::Put(n, d, o); });
  }
  Status Delete(std::string_view n, const WriteOptions& o) override {
    return Log("DELETE", n, [&] { return BlobStoreWrapper::Delete(n, o); });
  }
  Result<ListPage> List(const ListOptions& o) override {
    return Log("LIST", o.prefix, [&] { return BlobStoreWrapper::List(o); });
  }
  Result<WriteResult> SetMetadata(std::string_view n, const Metadata& m,
                                  const WriteOptions& o) override {
    return Log("SET-METADATA", n, [&] { return BlobStoreWrapper::SetMetadata(n, m, o); });
  }
  Result<LeaseResult> AcquireLease(std::string_view n, int d, std::string_view p,
                                   const LeaseOptions& c) override {
    return Log("LEASE-ACQUIRE", n, [&] { return BlobStoreWrapper::AcquireLease(n, d, p, c); });
  }
  Result<LeaseResult> RenewLease(std::string_view n, std::string_view id,
                                 const LeaseOptions& c) override {
    return Log("LEASE-RENEW", n, [&] { return BlobStoreWrapper::RenewLease(n, id, c); });
  }
  Result<LeaseResult> ChangeLease(std::string_view n, std::string_view id, std::string_view p,
                                  const LeaseOptions& c) override {
    return Log("LEASE-CHANGE", n, [&] { return BlobStoreWrapper::ChangeLease(n, id, p, c); });
  }
  Result<LeaseResult> ReleaseLease(std::string_view n, std::string_view id,
                                   const LeaseOptions& c) override {
    return Log("LEASE-RELEASE", n, [&] { return BlobStoreWrapper::ReleaseLease(n, id, c); });
  }
  Result<LeaseResult> BreakLease(std::string_view n, std::optional<int> p,
                                 const LeaseOptions& c) override {
    return Log("LEASE-BREAK", n, [&] { return BlobStoreWrapper::BreakLease(n, p, c); });
  }
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override {
    // Named by its first step (a plain write's entity, a transaction's
    // first blob) and how many it has.
    const std::string what = (ops.empty() ? std::string() : ops[0].blob + " ") + "(" +
                             std::to_string(ops.size()) + " steps)";
    return Log("BATCH", what, [&] { return BlobStoreWrapper::CommitBatch(ops); });
  }

 private:
  template <typename Fn>
  std::invoke_result_t<Fn> Log(const char* op, std::string_view name, Fn&& fn) {
    const SteadyTime t0 = clock_->Steady();
    auto result = fn();
    const double ms = std::chrono::duration<double, std::milli>(clock_->Steady() - t0).count();
    log_(RequestLogLine(op, name, Outcome(StatusOf(result)), ms, 1));
    return result;
  }

  RequestLogSink log_;
  const Clock* clock_;
};

}  // namespace

std::shared_ptr<BlobStore> LogRequests(std::shared_ptr<BlobStore> target, RequestLogSink log,
                                       const Clock* clock) {
  if (!log) return target;
  return std::make_shared<LoggingBlobStore>(std::move(target), std::move(log),
                                            clock != nullptr ? *clock : *Clock::Real());
}

}  // namespace blobtable::internal
