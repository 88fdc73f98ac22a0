#include "txn/recovery.h"

#include <map>
#include <set>
#include <vector>

#include "model/blob_naming.h"
#include "remote/inline_body.h"
#include "txn/intent_resolver.h"
#include "util/macros.h"
#include "util/random.h"
#include "txn/sync_point.h"
#include "txn/txn_record.h"

namespace blobtable {
namespace {

// Keeps a resolver's lease on a record alive: renewed once a third of it
// has passed, checked between steps.
class LeaseKeeper {
 public:
  LeaseKeeper(const ResolveContext& ctx, std::string blob, std::string id)
      : ctx_(ctx), blob_(std::move(blob)), id_(std::move(id)), since_(ctx.clock.Steady()) {}

  Status Renew() {
    if (ctx_.clock.Steady() - since_ < std::chrono::seconds(ctx_.lease_seconds) / 3)
      return Status::OK();
    auto r = ctx_.blobs.RenewLease(blob_, id_, {});
    if (!r.ok())
      return Status::LeaseLost("a resolver lost its lease on " + blob_ + ": " + r.status().message());
    since_ = ctx_.clock.Steady();
    BT_SYNC_POINT("recovery.renewed");
    return Status::OK();
  }

 private:
  const ResolveContext& ctx_;
  const std::string blob_, id_;
  SteadyTime since_;
};

// Applies one committed write by the replay rule, with the transaction's
// lease id. Busy if another party leases the entity right now.
Status RollForward(const ResolveContext& ctx, const TxnRecord& rec, const TxnWrite& w) {
  BlobStore& blobs = ctx.blobs;
  auto head = blobs.Head(w.blob, {});
  // Gone: a delete applied (a put target is held under the transaction's
  // lease until applied, so it cannot have vanished unapplied).
  if (head.status().IsNotFound()) return Status::OK();
  if (!head.ok()) return head.status();
  if (MetadataOf(head->properties, kTxnMetadata) == rec.txn_id) {
    // Stamped: applied already. Let go of its lease if it is still held.
    (void)blobs.ReleaseLease(w.blob, rec.lease_id, {});
    return Status::OK();
  }
  // Infinite, like the coordinator's: if this resolver dies here, the entity
  // stays excluded until the next one applies the write.
  AccessConditions at_seen;
  at_seen.if_match = w.seen_etag;
  auto lease = blobs.AcquireLease(w.blob, kInfiniteLease, rec.lease_id, at_seen);
  if (lease.status().IsConflict() || lease.status().IsNotFound()) return Status::OK();  // later writer
  if (!lease.ok()) return lease.status();
  if (w.op == TxnWrite::kDelete) {
    WriteOptions o;
    o.lease_id = rec.lease_id;
    o.conditions.if_match = w.seen_etag;
    Status applied = blobs.Delete(w.blob, o);
    return applied.IsNotFound() || applied.IsConflict() ? Status::OK() : applied;
  }
  PutOptions o;
  o.lease_id = rec.lease_id;
  o.conditions.if_match = w.seen_etag;
  o.metadata = {{kTxnMetadata, rec.txn_id}};
  AddInlineBody(o.metadata, w.body, ctx.inline_body_max);
  Status applied = blobs.Put(w.blob, w.body, o).status();
  if (applied.IsConflict()) return Status::OK();  // a later writer won
  if (!applied.ok()) return applied;
  (void)blobs.ReleaseLease(w.blob, rec.lease_id, {});
  return Status::OK();
}

// Undoes what a pending transaction may have done to one entity.
Status Undo(const ResolveContext& ctx, const TxnRecord& rec, const std::string& blob) {
  auto head = ctx.blobs.Head(blob, {});
  if (head.status().IsNotFound()) return Status::OK();
  if (!head.ok()) return head.status();
  // Everything below is conditional on the version just read: a writer that
  // got in meanwhile is never undone.
  return ClearMark(ctx.blobs, blob, head->properties, rec.txn_id, rec.lease_id, ctx.lease_seconds);
}

Status ClearLockMarks(const ResolveContext& ctx, const TxnRecord& rec, LeaseKeeper& keeper) {
  for (const std::string& lock : rec.locks) {
    BT_RETURN_IF_ERROR(keeper.Renew());
    auto head = ctx.blobs.Head(lock, {});
    if (!head.ok() || MetadataOf(head->properties, kTxnMetadata) != rec.txn_id) continue;
    // Take it with the transaction's own id (works while it is its lease or
    // expired), at the version read; if someone else holds it now, they
    // overwrite the mark.
    AccessConditions at;
    at.if_match = head->properties.etag;
    if (!ctx.blobs.AcquireLease(lock, ctx.lease_seconds, rec.lease_id, at).ok()) continue;
    WriteOptions o;
    o.lease_id = rec.lease_id;
    o.conditions.if_match = head->properties.etag;
    (void)ctx.blobs.SetMetadata(lock, {}, o);
    (void)ctx.blobs.ReleaseLease(lock, rec.lease_id, {});
  }
  return Status::OK();
}

// Under the record's lease `resolver`: finishes or undoes the transaction
// and removes its record.
Status Resolve(const ResolveContext& ctx, const std::string& name, const std::string& body,
               LeaseKeeper& keeper, const std::string& resolver) {
  BT_ASSIGN_OR_RETURN(TxnRecord rec, DecodeRecord(body, name));
  std::set<std::string> written;
  if (rec.state == TxnState::kCommitted) {
    for (const TxnWrite& w : rec.writes) {
      BT_RETURN_IF_ERROR(keeper.Renew());
      BT_RETURN_IF_ERROR(RollForward(ctx, rec, w));
      written.insert(w.blob);
    }
  } else if (rec.state == TxnState::kPending) {
    // Mark it aborted first: this also fences the coordinator's commit
    // point (conditional on the record it created), and a resolver that
    // dies mid-undo leaves a record that says so.
    TxnRecord aborted = rec;
    aborted.state = TxnState::kAborted;
    PutOptions o;
    o.lease_id = resolver;
    BT_RETURN_IF_ERROR(ctx.blobs.Put(name, EncodeRecord(aborted), o).status());
  }
  // Entities it reserved, marked or leased and did not write (all of them
  // unless it committed): undo.
  for (const std::string& e : rec.entities) {
    if (written.count(e)) continue;
    BT_RETURN_IF_ERROR(keeper.Renew());
    BT_RETURN_IF_ERROR(Undo(ctx, rec, e));
  }
  BT_RETURN_IF_ERROR(ClearLockMarks(ctx, rec, keeper));
  BT_RETURN_IF_ERROR(keeper.Renew());
  WriteOptions del;
  del.lease_id = resolver;
  Status s = ctx.blobs.Delete(name, del);
  // A delete under a lease whose answer was lost is OutcomeUnknown: gone
  // now is all this needs, whoever deleted it.
  if (s.code() == Code::kOutcomeUnknown && ctx.blobs.Head(name, {}).status().IsNotFound())
    return Status::OK();
  return s.IsNotFound() ? Status::OK() : s;
}

// Removes what transaction `txn`, judged resolved (its record is gone),
// left on `blob`: its protocol-1 mark (under its own id), or the lease on
// an entity it stamped. Only `txn`'s, and only at a version still showing
// it (invariant C1 of docs/protocol.md): the blob is read again here, and
// what it shows now may be another transaction's (a protocol-2 intent
// placed since, whose lease this must never let go). Busy if the record
// exists after all.
Status ClearOrphan(const ResolveContext& ctx, std::string_view blob, const std::string& txn) {
  auto head = ctx.blobs.Head(blob, {});
  if (!head.ok()) return head.status().IsNotFound() ? Status::OK() : head.status();
  const BlobProperties& p = head->properties;
  if (!PrewritingTransaction(p).empty()) return Status::OK();  // moved on: the caller reads again
  const std::string mark = MetadataOf(p, kIntentMetadata).empty() ? MetadataOf(p, kReservationMetadata)
                                                              : MetadataOf(p, kIntentMetadata);
  if (mark.empty()) {
    if (MetadataOf(p, kTxnMetadata) == txn && p.lease_status == LeaseStatus::kLocked) {
      AccessConditions at;
      at.if_match = p.etag;
      (void)ctx.blobs.ReleaseLease(blob, txn, at);  // succeeds only if still its lease
    }
    return Status::OK();
  }
  if (mark != txn) return Status::OK();  // another transaction's now
  auto record = ctx.blobs.Head(RecordBlobName(txn), {});
  if (record.ok()) return Status::Busy("transaction " + txn + " still has a record");
  if (!record.status().IsNotFound()) return record.status();
  return ClearMark(ctx.blobs, blob, p, txn, txn, ctx.lease_seconds);
}

}  // namespace

std::string MarkingTransaction(const BlobProperties& p) {
  std::string txn = MetadataOf(p, kIntentMetadata);
  if (txn.empty()) txn = MetadataOf(p, kReservationMetadata);
  return txn.empty() ? PrewritingTransaction(p) : txn;
}

Status ClearMark(BlobStore& blobs, std::string_view blob, const BlobProperties& seen,
                 const std::string& txn_id, const std::string& lease_id, int lease_seconds) {
  AccessConditions at;
  at.if_match = seen.etag;
  bool reservation = MetadataOf(seen, kReservationMetadata) == txn_id;
  bool intent = MetadataOf(seen, kIntentMetadata) == txn_id;
  if (!reservation && !intent) {
    (void)blobs.ReleaseLease(blob, lease_id, at);  // only if still its lease, at that version
    return Status::OK();
  }
  // (Re)take it with the transaction's id at the version seen: a finite
  // lease, so a resolver that dies here leaves nothing that does not pass.
  auto lease = blobs.AcquireLease(blob, lease_seconds, lease_id, at);
  if (lease.status().IsConflict() || lease.status().IsNotFound()) return Status::OK();  // changed
  if (!lease.ok()) return lease.status();
  WriteOptions o;
  o.lease_id = lease_id;
  o.conditions.if_match = seen.etag;
  if (reservation) {
    Status s = blobs.Delete(blob, o);
    return s.ok() || s.IsNotFound() || s.IsConflict() ? Status::OK() : s;
  }
  Metadata clean = seen.metadata;
  clean.erase(kIntentMetadata);
  Status s = blobs.SetMetadata(blob, clean, o).status();
  if (!s.ok() && !s.IsConflict() && !s.IsNotFound()) return s;
  (void)blobs.ReleaseLease(blob, lease_id, {});
  return Status::OK();
}

Status FinishRecord(const ResolveContext& ctx, const TxnRecord& rec, const BlobProperties& seen) {
  // Aborted: its intents are undone by whoever meets them; the record stays
  // (it is the fence against a commit point still on its way), removed by
  // Recover once it is old.
  if (rec.state != TxnState::kCommitted) return Status::OK();
  for (const TxnWrite& w : rec.writes) {
    auto got = ctx.blobs.Get(w.blob, {});
    if (got.status().IsNotFound()) continue;
    if (!got.ok()) return got.status();
    if (got->properties.etag != w.seen_etag ||
        PrewritingTransaction(got->properties) != rec.txn_id)
      continue;  // finished already, or written since
    BT_ASSIGN_OR_RETURN(EntityIntent intent, DecodeIntent(got->data, w.blob));
    BT_RETURN_IF_ERROR(FinishIntent(ctx, w.blob, intent, got->properties, /*committed=*/true));
  }
  WriteOptions as_seen;
  as_seen.conditions.if_match = seen.etag;
  Status gone = ctx.blobs.Delete(RecordBlobName(rec.txn_id), as_seen);
  return gone.ok() || gone.IsNotFound() || gone.IsConflict() ? Status::OK() : gone;
}

Status ResolveTransaction(const ResolveContext& ctx, std::string_view txn_id) {
  const std::string name = RecordBlobName(txn_id);
  // A cheap look first: a record whose lease is held has a live coordinator.
  auto look = ctx.blobs.Head(name, {});
  if (look.status().IsNotFound()) return Status::OK();
  if (!look.ok()) return look.status();
  if (look->properties.lease_status == LeaseStatus::kLocked)
    return Status::Busy("transaction " + std::string(txn_id) + " is still in progress");
  auto got = ctx.blobs.Get(name, {});
  if (got.status().IsNotFound()) return Status::OK();
  if (!got.ok()) return got.status();
  {
    auto rec = DecodeRecord(got->data, name);
    if (rec.ok() && rec->format == 2) return FinishRecord(ctx, *rec, got->properties);
  }
  // Taking the record's lease fences its coordinator: its commit-point write
  // and renewals need a lease it no longer has.
  const std::string resolver = NewGuid();
  AccessConditions same;
  same.if_match = got->properties.etag;
  auto lease = ctx.blobs.AcquireLease(name, ctx.lease_seconds, resolver, same);
  if (lease.status().IsNotFound()) return Status::OK();
  if (!lease.ok()) {
    if (lease.status().IsBusy() || lease.status().IsConflict())
      return Status::Busy("transaction " + std::string(txn_id) + " is still in progress");
    return lease.status();
  }
  BT_SYNC_POINT("recovery.record_taken");
  LeaseKeeper keeper(ctx, name, resolver);
  Status s = Resolve(ctx, name, got->data, keeper, resolver);
  if (s.ok()) return s;
  (void)ctx.blobs.ReleaseLease(name, resolver, {});  // let the next one try at once
  // Its lease ran out mid-way and another resolver took over: in progress.
  if (s.code() == Code::kLeaseLost)
    return Status::Busy("transaction " + std::string(txn_id) + " is being resolved by another: " +
                        s.message());
  return s;
}

Status ResolvePartitionLock(const ResolveContext& ctx, std::string_view lock_blob) {
  auto head = ctx.blobs.Head(lock_blob, {});
  if (head.status().IsNotFound()) return Status::OK();
  if (!head.ok()) return head.status();
  std::string txn = MetadataOf(head->properties, kTxnMetadata);
  if (txn.empty()) return Status::OK();
  return ResolveTransaction(ctx, txn);
}

Status ResolveBlob(const ResolveContext& ctx, std::string_view blob, const BlobProperties& seen) {
  if (!PrewritingTransaction(seen).empty()) return SettleIntent(ctx, blob, seen);
  if (!MetadataOf(seen, kSameAsMetadata).empty()) {
    // A protocol-2 intent rewritten plain whose lease was not let go yet.
    std::string stamp = MetadataOf(seen, kTxnMetadata);
    if (!stamp.empty() && seen.lease_status == LeaseStatus::kLocked)
      (void)ctx.blobs.ReleaseLease(blob, stamp, {});
    return Status::OK();
  }
  std::string txn = MarkingTransaction(seen);
  if (txn.empty()) {
    // A stamp on a blob still leased: a finished transaction that may not
    // have released it.
    txn = MetadataOf(seen, kTxnMetadata);
    if (txn.empty() || seen.lease_status != LeaseStatus::kLocked) return Status::OK();
  }
  BT_RETURN_IF_ERROR(ResolveTransaction(ctx, txn));
  return ClearOrphan(ctx, blob, txn);
}

namespace {

// True if record blob `item` is damaged (its body decodes to no record).
bool RecordDamaged(BlobStore& blobs, const BlobItem& item) {
  auto got = blobs.Get(item.name, {});
  return got.ok() && !DecodeRecord(got->data, item.name).ok();
}

}  // namespace

namespace {

// Every protocol-2 intent in the container, settled as a writer would
// (finished, undone, or decided aborted once its leases ran out). Adds the
// transactions settled to `settled`, those still at work to `in_flight`.
Status SettleAllIntents(const ResolveContext& ctx, std::set<std::string>& settled,
                        std::map<std::string, std::vector<std::string>>& in_flight) {
  ListOptions list;
  list.prefix = kTablePrefix;
  int pages = 0;
  for (;;) {
    BT_ASSIGN_OR_RETURN(ListPage page, ctx.blobs.List(list));
    for (const BlobItem& item : page.items) {
      const std::string txn = PrewritingTransaction(item.properties);
      if (txn.empty()) {
        // An intent rewritten plain whose lease was not let go yet.
        if (!MetadataOf(item.properties, kSameAsMetadata).empty() &&
            item.properties.lease_status == LeaseStatus::kLocked)
          BT_RETURN_IF_ERROR(ResolveBlob(ctx, item.name, item.properties));
        continue;
      }
      Status s = SettleIntent(ctx, item.name, item.properties, SettleAs::kRecovery);
      if (s.IsBusy()) {
        in_flight[txn].push_back(item.name);
        continue;
      }
      if (!s.ok()) return s.WithContext("settling " + item.name);
      settled.insert(txn);
      BT_SYNC_POINT("recovery.settled_one");
    }
    BT_ASSIGN_OR_RETURN(bool more, NextListPage(list, page, &pages));
    if (!more) return Status::OK();
  }
}

// How long an aborted protocol-2 record is kept: it is the fence that stops
// a commit point still on its way (a coordinator that stalled between its
// last lease check and its commit point), so it outlives any such stall
// that is not absurd.
constexpr auto kAbortedRecordLifetime = std::chrono::hours(1);

// A protocol-2 record met by Recover: a committed one is finished and
// removed (true: it was still to do), an old aborted one removed.
Result<bool> RecoverRecord2(const ResolveContext& ctx, const BlobItem& item,
                            const TxnRecord& rec) {
  if (rec.state == TxnState::kCommitted) {
    BT_RETURN_IF_ERROR(FinishRecord(ctx, rec, item.properties));
    return true;
  }
  if (ctx.clock.Now() - item.properties.last_modified > kAbortedRecordLifetime) {
    WriteOptions as_seen;
    as_seen.conditions.if_match = item.properties.etag;
    Status gone = ctx.blobs.Delete(item.name, as_seen);
    if (!gone.ok() && !gone.IsNotFound() && !gone.IsConflict()) return gone;
  }
  return false;
}

}  // namespace

Result<int> RecoverAbandoned(const ResolveContext& ctx, bool discard_damaged,
                             std::vector<InFlightTxn>* in_flight_out) {
  std::set<std::string> settled;
  std::map<std::string, std::vector<std::string>> in_flight;
  BT_RETURN_IF_ERROR(SettleAllIntents(ctx, settled, in_flight));
  int resolved = static_cast<int>(settled.size());
  std::vector<Status> damaged;  // the others are resolved all the same
  ListOptions list;
  list.prefix = kRecordPrefix;
  int pages = 0;
  for (;;) {
    BT_ASSIGN_OR_RETURN(ListPage page, ctx.blobs.List(list));
    for (const BlobItem& item : page.items) {
      const std::string txn = item.name.substr(std::string(kRecordPrefix).size());
      if (item.properties.lease_status == LeaseStatus::kLocked) {  // its coordinator is at work
        in_flight[txn];
        continue;
      }
      if (auto got = ctx.blobs.Get(item.name, {}); got.ok()) {
        auto rec = DecodeRecord(got->data, item.name);
        if (rec.ok() && rec->format == 2) {
          BlobItem seen{item.name, got->properties, std::nullopt};
          BT_ASSIGN_OR_RETURN(bool was_to_do, RecoverRecord2(ctx, seen, *rec));
          if (was_to_do && !settled.count(txn)) ++resolved;
          continue;
        }
      }
      Status s = ResolveTransaction(ctx, txn);
      if (s.ok()) {
        ++resolved;
      } else if (s.code() == Code::kCorruption && discard_damaged &&
                 RecordDamaged(ctx.blobs, item)) {
        WriteOptions as_seen;  // only the damaged version seen
        as_seen.conditions.if_match = item.properties.etag;
        Status gone = ctx.blobs.Delete(item.name, as_seen);
        if (!gone.ok() && !gone.IsNotFound()) return gone;
        ++resolved;
      } else if (s.code() == Code::kCorruption) {
        damaged.push_back(s);
      } else if (!s.IsBusy()) {
        return s;
      }
    }
    BT_ASSIGN_OR_RETURN(bool more, NextListPage(list, page, &pages));
    if (!more) break;
  }
  if (in_flight_out != nullptr)
    for (auto& [txn, blobs] : in_flight) in_flight_out->push_back({txn, std::move(blobs)});
  if (damaged.empty()) return resolved;
  return Status::Corruption(std::to_string(resolved) + " transaction(s) resolved; " +
                            std::to_string(damaged.size()) + " record(s) damaged, the first: " +
                            damaged.front().message());
}

}  // namespace blobtable
