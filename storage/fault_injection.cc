// SPDX-License-Identifier: Apache-2.0
// FaultInjectingBlobStore (include/blobtable/fault_injection.h).
#include "blobtable/fault_injection.h"

#include "storage/storage_errors.h"
#include "util/random.h"

namespace blobtable {

const char* BlobOpName(BlobOp op) {
  static const char* kNames[kBlobOpCount] = {"get",           "head",        "put",
                                             "delete",        "list",        "set-metadata",
                                             "acquire-lease", "renew-lease", "change-lease",
                                             "release-lease", "break-lease", "batch"};
  return kNames[static_cast<int>(op)];
}

const char* FaultName(Fault f) {
  static const char* kNames[kFaultCount] = {"server-busy",  "internal-error", "timeout",
                                            "reset-before", "reset-after",    "lease-lost"};
  return kNames[static_cast<int>(f)];
}

FaultInjectingBlobStore::FaultInjectingBlobStore(std::shared_ptr<BlobStore> target,
                                                 FaultOptions options)
    : BlobStoreWrapper(std::move(target)), options_(std::move(options)) {}

uint64_t FaultInjectingBlobStore::injected() const {
  uint64_t n = 0;
  for (const auto& count : injected_) n += count.load();
  return n;
}

FaultInjectingBlobStore::Decision FaultInjectingBlobStore::Decide(BlobOp op, std::string_view name,
                                                                  bool presents_lease) {
  Decision d;
  if (!enabled_.load()) return d;
  d.n = ++calls_;
  auto it = options_.per_op.find(op);
  const FaultRates& r = it == options_.per_op.end() ? options_.rates : it->second;
  const int rates[kFaultCount] = {r.server_busy, r.internal_error,
                                  r.timeout,     r.reset_before,
                                  r.reset_after, presents_lease ? r.lease_lost : 0};
  // Draws from (seed, n) alone: the n-th call meets the same fault again.
  uint64_t draw = internal::Mix64(options_.seed ^ internal::Mix64(d.n));
  for (int k = 0; k < kFaultCount && !d.faulted; ++k) {
    draw = internal::Mix64(draw);
    if (rates[k] > 0 && draw % static_cast<uint64_t>(rates[k]) == 0) {
      d.faulted = true;
      d.fault = static_cast<Fault>(k);
    }
  }
  if (!d.faulted) return d;
  switch (d.fault) {
    case Fault::kServerBusy:
    case Fault::kResetBefore: d.apply = false; break;
    case Fault::kInternalError:
    case Fault::kTimeout: d.apply = internal::Mix64(draw) % 2 == 0; break;
    case Fault::kResetAfter:
    case Fault::kLeaseLost: d.apply = true; break;
  }
  ++injected_[static_cast<int>(d.fault)];
  if (options_.log)
    options_.log(std::to_string(d.n) + " " + BlobOpName(op) + " " + std::string(name) + " " +
                 FaultName(d.fault) + (d.apply ? " applied" : " not-applied"));
  return d;
}

void FaultInjectingBlobStore::BreakLeaseOf(std::string_view name) {
  (void)BlobStoreWrapper::BreakLease(name, 0, {});
}

template <typename R, typename Fn>
R FaultInjectingBlobStore::Run(BlobOp op, std::string_view name, bool presents_lease, Fn&& call) {
  const Decision d = Decide(op, name, presents_lease);
  if (!d.faulted) return call();
  const bool write = op != BlobOp::kGet && op != BlobOp::kHead && op != BlobOp::kList;
  const std::string what = std::string(BlobOpName(op)) + " '" + std::string(name) + "': injected " +
                           FaultName(d.fault) + " (call " + std::to_string(d.n) + ", seed " +
                           std::to_string(options_.seed) + ")";
  switch (d.fault) {
    case Fault::kLeaseLost: BreakLeaseOf(name); return call();
    case Fault::kServerBusy:
      return Status::FromStorage(Code::kUnavailable, 503, "ServerBusy", what);
    case Fault::kResetBefore:
      return Status::FromStorage(Code::kUnavailable, 0, internal::kNotSent, what);
    case Fault::kInternalError:
    case Fault::kTimeout:
    case Fault::kResetAfter:
      if (d.apply) (void)call();
      // A write whose answer is lost may have been applied: the caller must
      // not take it for undone (nor retry it as if it were).
      if (write) return Status::OutcomeUnknown(what);
      if (d.fault == Fault::kInternalError)
        return Status::FromStorage(Code::kUnavailable, 500, "InternalError", what);
      return Status::Unavailable(what);
  }
  return call();
}

Result<GetResult> FaultInjectingBlobStore::Get(std::string_view name, const ReadOptions& o) {
  return Run<Result<GetResult>>(BlobOp::kGet, name, false,
                                [&] { return BlobStoreWrapper::Get(name, o); });
}
Result<GetResult> FaultInjectingBlobStore::Head(std::string_view name, const AccessConditions& c) {
  return Run<Result<GetResult>>(BlobOp::kHead, name, false,
                                [&] { return BlobStoreWrapper::Head(name, c); });
}
Result<WriteResult> FaultInjectingBlobStore::Put(std::string_view name, std::string_view data,
                                                 const PutOptions& o) {
  return Run<Result<WriteResult>>(BlobOp::kPut, name, !o.lease_id.empty(),
                                  [&] { return BlobStoreWrapper::Put(name, data, o); });
}
Status FaultInjectingBlobStore::Delete(std::string_view name, const WriteOptions& o) {
  return Run<Status>(BlobOp::kDelete, name, !o.lease_id.empty(),
                     [&] { return BlobStoreWrapper::Delete(name, o); });
}
Result<ListPage> FaultInjectingBlobStore::List(const ListOptions& o) {
  return Run<Result<ListPage>>(BlobOp::kList, o.prefix, false,
                               [&] { return BlobStoreWrapper::List(o); });
}
Result<WriteResult> FaultInjectingBlobStore::SetMetadata(std::string_view name, const Metadata& m,
                                                         const WriteOptions& o) {
  return Run<Result<WriteResult>>(BlobOp::kSetMetadata, name, !o.lease_id.empty(),
                                  [&] { return BlobStoreWrapper::SetMetadata(name, m, o); });
}
Result<LeaseResult> FaultInjectingBlobStore::AcquireLease(std::string_view name, int duration,
                                                          std::string_view proposed,
                                                          const LeaseOptions& c) {
  return Run<Result<LeaseResult>>(BlobOp::kAcquireLease, name, false, [&] {
    return BlobStoreWrapper::AcquireLease(name, duration, proposed, c);
  });
}
Result<LeaseResult> FaultInjectingBlobStore::RenewLease(std::string_view name, std::string_view id,
                                                        const LeaseOptions& c) {
  return Run<Result<LeaseResult>>(BlobOp::kRenewLease, name, true,
                                  [&] { return BlobStoreWrapper::RenewLease(name, id, c); });
}
Result<LeaseResult> FaultInjectingBlobStore::ChangeLease(std::string_view name, std::string_view id,
                                                         std::string_view proposed,
                                                         const LeaseOptions& c) {
  return Run<Result<LeaseResult>>(BlobOp::kChangeLease, name, true, [&] {
    return BlobStoreWrapper::ChangeLease(name, id, proposed, c);
  });
}
Result<LeaseResult> FaultInjectingBlobStore::ReleaseLease(std::string_view name,
                                                          std::string_view id,
                                                          const LeaseOptions& c) {
  return Run<Result<LeaseResult>>(BlobOp::kReleaseLease, name, true,
                                  [&] { return BlobStoreWrapper::ReleaseLease(name, id, c); });
}
Result<LeaseResult> FaultInjectingBlobStore::BreakLease(std::string_view name,
                                                        std::optional<int> period,
                                                        const LeaseOptions& c) {
  return Run<Result<LeaseResult>>(BlobOp::kBreakLease, name, false,
                                  [&] { return BlobStoreWrapper::BreakLease(name, period, c); });
}

BatchResult FaultInjectingBlobStore::CommitBatch(const std::vector<BatchOp>& ops) {
  auto done = Run<Result<BatchResult>>(
      BlobOp::kBatch, ops.empty() ? "" : ops.front().blob, false,
      [&]() -> Result<BatchResult> { return BlobStoreWrapper::CommitBatch(ops); });
  if (done.ok()) return *std::move(done);
  BatchResult failed;  // a fault, applied or not: the whole batch
  failed.status = done.status();
  failed.failed = ops.size();
  return failed;
}

}  // namespace blobtable
