// SPDX-License-Identifier: Apache-2.0
// Transactions committed as one atomic batch (atomic_commit.h).
//
// Where the backend applies every step of a batch as one atomic change (the
// local store: one LMDB write transaction, which LMDB serialises across
// threads and processes), nothing needs locking. Each entity is read, the
// transaction's reads and conditions are checked against it, and the batch
// writes (or checks) every entity at exactly the version read: a batch that
// meets any change made since is not applied, and the transaction plans
// again, where a change that breaks its reads or conditions is reported.
//
// Transactions that go through the lease coordinator on the same store
// (TestingHooks::atomic_commits off, or an older blobtable) leave marks,
// reservations and leases: an entity's mark is settled (its transaction
// resolved, or waited for) before the entity is used, and a lease makes the
// batch fail Busy for that entity, which waits as the coordinator would.
#include "txn/atomic_commit.h"

#include <algorithm>
#include <map>
#include <optional>

#include "model/entity_codec.h"
#include "model/index_schema.h"
#include "model/inline_body.h"
#include "txn/definitions_check.h"
#include "txn/index_upkeep.h"
#include "txn/intent_resolver.h"
#include "txn/recovery.h"
#include "txn/txn_context.h"
#include "testing/sync_point.h"
#include "util/macros.h"
#include "util/random.h"
#include "util/stored_format.h"

namespace blobtable::internal {
namespace {

using Kind = Intent::Kind;

class AtomicCommit {
 public:
  explicit AtomicCommit(TxnBuffer& b)
      : b_(b),
        core_(*b.core),
        blobs_(*core_.blobs),
        id_(NewGuid()),
        deadline_(core_.clock->Steady() + b.options.lock_timeout) {}

  Result<std::vector<CommittedWrite>> Run() {
    BT_RETURN_IF_ERROR(ValidateOptions(b_.options));
    // The index definitions followed are checked in the batch (SchemaReads),
    // not by their age before it: the batch may wait for the writer lock
    // after any check made outside it.
    BT_ASSIGN_OR_RETURN(schema_reads_, SchemaReads(b_));
    reread_.assign(schema_reads_.size(), false);
    for (int races = 0;;) {
      BT_RETURN_IF_ERROR(Plan());
      BT_SYNC_POINT("txn.atomic_planned");
      ++b_.rounds;
      Span span(core_.tracer(), "blobtable.commit.round", {{"round", "batch"}});
      BatchResult done = blobs_.CommitBatch(ops_);
      span.End(done.status);
      if (done.status.ok()) return Committed(done.writes);
      const Status& s = done.status;
      if (s.IsOutcomeUnknown()) {
        BT_ASSIGN_OR_RETURN(bool applied, WasApplied(s));
        if (applied) return Committed({});
        return Status::Unavailable("transaction " + id_ + ": its batch got no answer (" +
                                   s.message() + ") and was not applied; nothing was committed");
      }
      if (done.failed >= ops_.size()) return s;  // nothing applied
      const Intent& failed = *planned_[done.failed];
      if (s.IsBusy()) {
        // Leased: by a coordinator's transaction (settled, or waited for),
        // or by another client (waited for).
        BT_RETURN_IF_ERROR(WaitForLease(failed));
        continue;
      }
      if (!s.IsConflict() && !s.IsNotFound()) return s.WithContext(failed.Describe());
      if (auto k = SchemaReadOf(failed)) reread_[*k] = true;  // read them, plan again
      // Changed since it was read: plan again (which reports a change that
      // breaks what the transaction read or asked for).
      if (++races >= std::max(1, core_.max_merge_attempts))
        return Status::Conflict(
            "transaction " + id_ + ": gave up after " + std::to_string(races) +
            " attempts, each raced by another writer (last: " + failed.Describe() + ")");
    }
  }

 private:
  // One step per intent, in blob order, then one per definitions followed:
  // each entity checked or written at the version just read.
  Status Plan() {
    ops_.clear();
    planned_.clear();
    for (auto& [blob, intent] : b_.intents) BT_RETURN_IF_ERROR(PlanOne(intent));
    for (size_t k = 0; k < schema_reads_.size(); ++k)
      BT_RETURN_IF_ERROR(PlanSchemaRead(schema_reads_[k], reread_[k]));
    return Status::OK();
  }

  // The step that checks the definitions `s` followed: still absent, unread,
  // the first time there were none (`reread` after that step failed); else
  // at the version read now, if that still says what writers maintain
  // (a build's progress rewrites them page after page).
  Status PlanSchemaRead(const SchemaRead& s, bool reread) {
    BatchOp op = DefinitionsCheck(s.read.blob, "");
    if (reread || s.read.read_found) {
      BT_ASSIGN_OR_RETURN(std::optional<GetResult> cur, ReadSettled(s.read));
      const bool exists = cur.has_value();
      if (exists) op = DefinitionsCheck(s.read.blob, cur->properties.etag);
      if (!Expectation(s.read, exists, exists ? cur->properties.etag : "",
                       exists ? SameAsOf(cur->properties) : "")
               .ok()) {
        TableSchema now;  // none: no index
        if (exists) {
          BT_ASSIGN_OR_RETURN(Entity stored, DecodeEntity(cur->data, s.read.blob));
          BT_ASSIGN_OR_RETURN(now, SchemaOf(stored, s.table));
        }
        if (!SameUpkeep(now, *s.followed)) return SchemaChanged(b_, s.table);
      }
    }
    ops_.push_back(std::move(op));
    planned_.push_back(&s.read);
    return Status::OK();
  }

  // The place in schema_reads_ of `i`, if it is one of them.
  std::optional<size_t> SchemaReadOf(const Intent& i) const {
    for (size_t k = 0; k < schema_reads_.size(); ++k)
      if (&schema_reads_[k].read == &i) return k;
    return std::nullopt;
  }

  // The step of `intent`, at the version of its entity read now.
  Status PlanOne(const Intent& intent) {
    BT_ASSIGN_OR_RETURN(std::optional<GetResult> cur, ReadSettled(intent));
    const bool exists = cur.has_value();
    BT_RETURN_IF_ERROR(Expectation(intent, exists, exists ? cur->properties.etag : "",
                                   exists ? SameAsOf(cur->properties) : ""));
    BatchOp op;
    op.blob = intent.blob;
    if (exists)
      op.conditions.if_match = cur->properties.etag;
    else
      op.conditions.if_none_match = std::string(kAnyETag);
    if (intent.kind == Kind::kPut || intent.kind == Kind::kMerge) {
      op.kind = BatchOp::Kind::kPut;
      BT_ASSIGN_OR_RETURN(op.data,
                          NewBody(intent, exists ? &cur->data : nullptr, core_.clock->Now()));
      // Stamped as the coordinator stamps a committed write: a batch whose
      // answer is lost is found applied by it (WasApplied).
      op.metadata = {{kTxnMetadata, id_}};
      AddInlineBody(op.metadata, op.data, core_.inline_body_max);
    } else if (intent.kind == Kind::kDelete && exists) {
      op.kind = BatchOp::Kind::kDelete;
    } else {
      op.kind = BatchOp::Kind::kCheck;  // read, or checked: only validated
    }
    ops_.push_back(std::move(op));
    planned_.push_back(&intent);
    return Status::OK();
  }

  // The entity as storage holds it once no other transaction's mark or
  // reservation is on it (that transaction resolved, or waited for);
  // nullopt if absent.
  Result<std::optional<GetResult>> ReadSettled(const Intent& i) {
    int round = 0;
    std::string resolved_at;  // the version last handed to a resolver
    for (;;) {
      auto cur = blobs_.Get(i.blob, {});
      if (!cur.ok()) {
        if (cur.status().IsNotFound()) return std::optional<GetResult>();
        return cur.status().WithContext(i.Describe());
      }
      if (MarkingTransaction(cur->properties).empty())
        return std::optional<GetResult>(*std::move(cur));
      if (cur->properties.etag == resolved_at)
        BT_RETURN_IF_ERROR(WaitBusy(i.Describe() + " (held by a transaction)", &round));
      resolved_at = cur->properties.etag;
      Status r = ResolveBlob(core_.Resolver(), i.blob, cur->properties);
      if (!r.ok() && !r.IsBusy()) return r;
    }
  }

  Status WaitForLease(const Intent& i) {
    auto head = blobs_.Head(i.blob, {});
    if (head.ok()) {
      Status r = ResolveBlob(core_.Resolver(), i.blob, head->properties);
      if (!r.ok() && !r.IsBusy()) return r;
    }
    return WaitBusy(i.Describe() + " (leased)", &lease_round_);
  }

  Status WaitBusy(const std::string& what, int* round) {
    if (core_.clock->Steady() >= deadline_)
      return Status::LockTimeout("transaction " + id_ + ": " + what + " stayed busy for " +
                                 std::to_string(b_.options.lock_timeout.count()) + " ms");
    ++b_.lock_waits;
    core_.Backoff(round);
    return Status::OK();
  }

  // The batch's answer was lost. Applied if an entity it put carries this
  // transaction's stamp; not applied if an entity it replaces or deletes is
  // still at the ETag planned (an applied batch changes each of them at
  // once, and an ETag never comes back); otherwise nobody can tell. An
  // entity planned absent and absent again proves nothing: the batch may
  // have inserted it and another client deleted it since.
  Result<bool> WasApplied(const Status& lost) {
    bool untouched = false;
    for (const BatchOp& op : ops_) {
      if (op.kind == BatchOp::Kind::kCheck) continue;
      auto head = blobs_.Head(op.blob, {});
      if (!head.ok() && !head.status().IsNotFound())
        return Status::OutcomeUnknown("transaction " + id_ + ": its batch got no answer (" +
                                      lost.message() + ") and reading back failed (" +
                                      head.status().ToString() + ")");
      if (head.ok()) {
        auto stamp = head->properties.metadata.find(kTxnMetadata);
        if (stamp != head->properties.metadata.end() && stamp->second == id_)
          stamped_[op.blob] = head->properties.etag;
      }
      if (head.ok() && op.conditions.if_match == head->properties.etag) untouched = true;
    }
    if (!stamped_.empty()) return true;
    if (untouched) return false;
    return Status::OutcomeUnknown(
        "transaction " + id_ + ": its batch got no answer (" + lost.message() +
        ") and no entity it replaces or deletes is still at the version planned (one it "
        "inserts, absent again, may have been inserted and deleted since): read them, then "
        "decide");
  }

  // The writes in the order they were buffered, with their new ETags
  // (`writes` from the batch; empty when its answer was lost and reading
  // back found it applied: then only the ETags still stamped are known).
  std::vector<CommittedWrite> Committed(const std::vector<WriteResult>& writes) {
    std::vector<std::pair<const Intent*, std::string>> out;
    for (size_t k = 0; k < planned_.size(); ++k) {
      const Intent& i = *planned_[k];
      if (!i.writes()) continue;
      std::string etag;
      if (k < writes.size())
        etag = writes[k].etag;
      else if (auto it = stamped_.find(i.blob); it != stamped_.end())
        etag = it->second;
      out.emplace_back(&i, etag);
    }
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.first->order < b.first->order; });
    std::vector<CommittedWrite> committed;
    for (const auto& [i, etag] : out) committed.push_back({i->table, i->pk, i->rk, etag, true});
    return committed;
  }

  TxnBuffer& b_;
  const TxnContext& core_;
  BlobStore& blobs_;
  const std::string id_;  // stamps the entities it writes
  const SteadyTime deadline_;
  int lease_round_ = 0;
  std::vector<BatchOp> ops_;
  std::vector<const Intent*> planned_;          // ops_[k] is planned_[k]'s
  std::vector<SchemaRead> schema_reads_;        // the definitions followed, checked too
  std::vector<bool> reread_;                    // reread_[k]: read schema_reads_[k] to plan it
  std::map<std::string, std::string> stamped_;  // blob -> ETag, found applied
};

}  // namespace

bool CommitsAtomically(const TxnBuffer& buffer) { return buffer.core->CommitsInBatches(); }

Result<std::vector<CommittedWrite>> CommitAtomically(TxnBuffer& buffer) {
  AtomicCommit c(buffer);
  return c.Run();
}

}  // namespace blobtable::internal
