// SPDX-License-Identifier: Apache-2.0
// The BlobStore wrapper that routes every request through the scheduler
// (sim_scheduler.h), naming the points where the protocol's windows are:
// record creates (commit point, or a decider's abort) and entity GETs that
// returned an intent (a reader between the intent and its record).
#include "devtools/stress/sim/sim_scheduler.h"
#include "txn/intent.h"
#include "txn/recovery.h"
#include "txn/txn_record.h"
#include "util/macros.h"
#include "util/stored_format.h"

namespace blobtable::sim {

namespace {

// A write of a transaction record: which way it decides (a pending one
// decides nothing).
PointKind KindOfPut(std::string_view name, std::string_view data, const PutOptions&) {
  if (name.rfind(internal::kRecordPrefix, 0) != 0) return PointKind::kRequest;
  auto rec = internal::DecodeRecord(data, name);
  if (!rec.ok()) return PointKind::kRequest;
  if (rec->state == internal::TxnState::kCommitted) return PointKind::kCommitPoint;
  if (rec->state == internal::TxnState::kAborted) return PointKind::kAbortCreate;
  return PointKind::kRequest;
}

class SimStore : public BlobStoreWrapper {
 public:
  SimStore(std::shared_ptr<BlobStore> t, SimScheduler& s) : BlobStoreWrapper(std::move(t)), s_(s) {}

  Result<GetResult> Get(std::string_view n, const ReadOptions& o) override {
    s_.Point("get " + std::string(n), PointKind::kRequest);
    auto r = BlobStoreWrapper::Get(n, o);
    const bool intent = r.ok() && !internal::PrewritingTransaction(r->properties).empty();
    s_.Point(intent ? "get answered: an intent" : "get answered",
             intent ? PointKind::kIntentRead : PointKind::kAnswered);
    return r;
  }
  Result<GetResult> Head(std::string_view n, const AccessConditions& c) override {
    return Read("head", n, [&] { return BlobStoreWrapper::Head(n, c); });
  }
  Result<ListPage> List(const ListOptions& o) override {
    return Read("list", o.prefix, [&] { return BlobStoreWrapper::List(o); });
  }
  Result<WriteResult> Put(std::string_view n, std::string_view d, const PutOptions& o) override {
    return Write("put", n, KindOfPut(n, d, o), [&] {
      BreakFirst(n, o.lease_id);
      return BlobStoreWrapper::Put(n, d, o);
    });
  }
  Status Delete(std::string_view n, const WriteOptions& o) override {
    return Write("delete", n, PointKind::kRequest, [&] {
      BreakFirst(n, o.lease_id);
      return BlobStoreWrapper::Delete(n, o);
    });
  }
  Result<WriteResult> SetMetadata(std::string_view n, const Metadata& m,
                                  const WriteOptions& o) override {
    return Write("metadata", n, PointKind::kRequest,
                 [&] { return BlobStoreWrapper::SetMetadata(n, m, o); });
  }
  Result<LeaseResult> AcquireLease(std::string_view n, int d, std::string_view p,
                                   const LeaseOptions& c) override {
    return Write("acquire", n, PointKind::kRequest,
                 [&] { return BlobStoreWrapper::AcquireLease(n, d, p, c); });
  }
  Result<LeaseResult> RenewLease(std::string_view n, std::string_view id,
                                 const LeaseOptions& c) override {
    return Write("renew", n, PointKind::kRequest,
                 [&] { return BlobStoreWrapper::RenewLease(n, id, c); });
  }
  Result<LeaseResult> ChangeLease(std::string_view n, std::string_view id, std::string_view p,
                                  const LeaseOptions& c) override {
    return Write("change", n, PointKind::kRequest,
                 [&] { return BlobStoreWrapper::ChangeLease(n, id, p, c); });
  }
  Result<LeaseResult> ReleaseLease(std::string_view n, std::string_view id,
                                   const LeaseOptions& c) override {
    return Write("release", n, PointKind::kRequest,
                 [&] { return BlobStoreWrapper::ReleaseLease(n, id, c); });
  }
  Result<LeaseResult> BreakLease(std::string_view n, std::optional<int> p,
                                 const LeaseOptions& c) override {
    return Write("break", n, PointKind::kRequest,
                 [&] { return BlobStoreWrapper::BreakLease(n, p, c); });
  }
  // One request, one point before and after, like any write (its answer is
  // not lost here: the atomic commit's read-back has tests of its own).
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override {
    const std::string first = ops.empty() ? "" : ops.front().blob;
    s_.Point("batch of " + std::to_string(ops.size()) + " from " + first, PointKind::kRequest);
    BatchResult r = BlobStoreWrapper::CommitBatch(ops);
    s_.Point("batch -> " + (r.status.ok() ? std::string("ok") : r.status.ToString().substr(0, 80)),
             PointKind::kAnswered);
    return r;
  }

 protected:
  SimScheduler& s_;

 private:
  // The lease a write presents, broken just before it (when chosen).
  void BreakFirst(std::string_view name, std::string_view lease_id) {
    if (!lease_id.empty() && s_.BreakLeaseFirst()) (void)BlobStoreWrapper::BreakLease(name, 0, {});
  }
  template <typename F>
  auto Read(const char* what, std::string_view name, F call) -> decltype(call()) {
    s_.Point(std::string(what) + " " + std::string(name), PointKind::kRequest);
    auto r = call();
    s_.Point(std::string(what) + " answered", PointKind::kAnswered);
    return r;
  }
  template <typename F>
  auto Write(const char* what, std::string_view name, PointKind kind, F call) -> decltype(call()) {
    s_.Point(std::string(what) + " " + std::string(name), kind);
    auto r = call();
    std::string outcome = internal::StatusOf(r).ok() ? "ok" : internal::StatusOf(r).ToString();
    s_.Point(std::string(what) + " -> " + outcome.substr(0, 80), PointKind::kAnswered);
    if (internal::StatusOf(r).ok() && s_.LoseResponse())
      return Status::Unavailable("simulated: the answer to this " + std::string(what) +
                                 " was lost (it was applied)");
    return r;
  }
};

// A SimStore over a backend that reads in place, reading in place itself:
// the points of a get or a listing around the backend's in-place read.
class InPlaceSimStore final : public SimStore, public internal::InPlaceReader {
 public:
  InPlaceSimStore(std::shared_ptr<BlobStore> t, SimScheduler& s, internal::InPlaceReader* backend)
      : SimStore(std::move(t), s), backend_(backend) {}

  Status ReadInPlace(std::string_view n, internal::InPlaceData data_check,
                     internal::BlobVisitor visit) override {
    s_.Point("get in place " + std::string(n), PointKind::kRequest);
    bool intent = false;
    Status r = backend_->ReadInPlace(n, data_check, [&](const internal::BlobInPlace& b) {
      intent = internal::HasMark(*b.metadata);
      return visit(b);
    });
    s_.Point(intent ? "get in place answered: an intent" : "get in place answered",
             intent ? PointKind::kIntentRead : PointKind::kAnswered);
    return r;
  }
  Result<std::string> ListInPlace(const ListOptions& o, internal::InPlaceData data_check,
                                  internal::BlobVisitor visit) override {
    s_.Point("list in place " + o.prefix, PointKind::kRequest);
    auto r = backend_->ListInPlace(o, data_check, visit);
    s_.Point("list in place answered", PointKind::kAnswered);
    return r;
  }

 private:
  internal::InPlaceReader* const backend_;
};

}  // namespace

std::shared_ptr<BlobStore> WrapForSimulation(std::shared_ptr<BlobStore> target, SimScheduler& sched,
                                             internal::InPlaceReader* in_place) {
  if (in_place != nullptr)
    return std::make_shared<InPlaceSimStore>(std::move(target), sched, in_place);
  return std::make_shared<SimStore>(std::move(target), sched);
}

}  // namespace blobtable::sim
