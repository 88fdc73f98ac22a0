// SPDX-License-Identifier: Apache-2.0
#include "tools/logging_blob_store.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <ostream>
#include <type_traits>
#include <vector>

#include "blobtable/blob_store.h"
#include "blobtable/store.h"
#include "util/macros.h"

namespace blobtable::cli {
namespace {

// The -v request log: whole lines, one at a time. Requests go out from
// several threads at once (a query's reads, import's writes), and lines
// written by each straight to the stream came out interleaved.
class RequestLog {
 public:
  explicit RequestLog(std::ostream& out) : out_(out) {}
  void Line(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    out_ << line << "\n";
  }

 private:
  std::mutex mu_;
  std::ostream& out_;
};

// Logs every BlobStore call (the -v request log).
using blobtable::internal::StatusOf;
const Status& StatusOf(const BatchResult& b) { return b.status; }

class LoggingBlobStore final : public BlobStoreWrapper {
 public:
  LoggingBlobStore(std::shared_ptr<BlobStore> target, std::shared_ptr<RequestLog> log)
      : BlobStoreWrapper(std::move(target)), log_(std::move(log)) {}

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
                                   const AccessConditions& c) override {
    return Log("LEASE-ACQUIRE", n, [&] { return BlobStoreWrapper::AcquireLease(n, d, p, c); });
  }
  Result<LeaseResult> RenewLease(std::string_view n, std::string_view id,
                                 const AccessConditions& c) override {
    return Log("LEASE-RENEW", n, [&] { return BlobStoreWrapper::RenewLease(n, id, c); });
  }
  Result<LeaseResult> ChangeLease(std::string_view n, std::string_view id, std::string_view p,
                                  const AccessConditions& c) override {
    return Log("LEASE-CHANGE", n, [&] { return BlobStoreWrapper::ChangeLease(n, id, p, c); });
  }
  Result<LeaseResult> ReleaseLease(std::string_view n, std::string_view id,
                                   const AccessConditions& c) override {
    return Log("LEASE-RELEASE", n, [&] { return BlobStoreWrapper::ReleaseLease(n, id, c); });
  }
  Result<LeaseResult> BreakLease(std::string_view n, std::optional<int> p,
                                 const AccessConditions& c) override {
    return Log("LEASE-BREAK", n, [&] { return BlobStoreWrapper::BreakLease(n, p, c); });
  }
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override {
    const std::string what = std::to_string(ops.size()) + " steps";
    return Log("BATCH", what, [&] { return BlobStoreWrapper::CommitBatch(ops); });
  }

 private:
  template <typename Fn>
  std::invoke_result_t<Fn> Log(const char* op, std::string_view name, Fn&& fn) {
    auto start = std::chrono::steady_clock::now();
    auto result = fn();
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const Status& s = StatusOf(result);
    char buf[32];
    snprintf(buf, sizeof(buf), "%.2f", ms);
    log_->Line("blobtable: " + std::string(op) + " " + std::string(name) + " -> " +
               (s.ok() ? "ok" : std::string(CodeName(s.code()))) +
               (s.storage_code().empty() ? "" : " " + s.storage_code()) + " " + buf +
               " ms attempt 1");
    return result;
  }

  std::shared_ptr<RequestLog> log_;
};

}  // namespace

void LogRequests(const std::string& location, StoreOptions& options, std::ostream& err) {
  auto log = std::make_shared<RequestLog>(err);
  if (IsConnectionString(location)) {
    // The Azure backend logs every HTTP attempt itself (with retries).
    options.azure.request_log = [log](const std::string& line) { log->Line(line); };
  } else {
    options.wrap_blob_store = [log](std::shared_ptr<BlobStore> backend) {
      return std::make_shared<LoggingBlobStore>(std::move(backend), log);
    };
  }
}

}  // namespace blobtable::cli
