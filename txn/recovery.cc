// SPDX-License-Identifier: Apache-2.0
#include "txn/recovery.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "model/blob_naming.h"
#include "model/inline_body.h"
#include "txn/intent_resolver.h"
#include "util/macros.h"
#include "util/random.h"
#include "testing/sync_point.h"
#include "txn/txn_record.h"

namespace blobtable::internal {

std::string MarkingTransaction(const BlobProperties& p) {
  std::string txn = PrewritingTransaction(p);
  if (!txn.empty()) return txn;
  for (const char* mark : {kProtocolOneIntentMetadata, kProtocolOneReservationMetadata})
    if (txn = MetadataOf(p, mark); !txn.empty()) return txn;
  return "";
}

bool HasMark(const std::vector<std::pair<std::string_view, std::string_view>>& metadata) {
  for (const auto& [name, value] : metadata) {
    if (name == kPrewriteMetadata && !value.empty()) return true;
    // Refused by the protocol's read whatever their value (RefuseProtocolOneMark).
    if (name == kProtocolOneIntentMetadata || name == kProtocolOneReservationMetadata) return true;
  }
  return false;
}

Status FinishRecord(const ResolveContext& ctx, const TxnRecord& rec, const BlobProperties& seen) {
  // Aborted or pending: its intents are undone by whoever meets them; the
  // record stays, removed by Recover once nothing of it is left.
  if (rec.state != TxnState::kCommitted) return Status::OK();
  for (const TxnWrite& w : rec.writes) {
    auto got = ctx.blobs.Get(w.blob, {});
    if (got.status().IsNotFound()) continue;
    if (!got.ok()) return got.status();
    if (got->properties.etag != w.intent_etag ||
        PrewritingTransaction(got->properties) != rec.txn_id) {
      // Finished already, or written since; a finishing whose lease
      // release did not happen yet (or failed) left the lease: let go of it.
      if (MetadataOf(got->properties, kTxnMetadata) == rec.txn_id)
        BT_RETURN_IF_ERROR(ResolveBlob(ctx, w.blob, got->properties));
      continue;
    }
    BT_ASSIGN_OR_RETURN(EntityIntent intent, DecodeIntent(got->data, w.blob));
    BT_RETURN_IF_ERROR(FinishIntent(ctx, w.blob, intent, got->properties, /*committed=*/true));
    BT_SYNC_POINT("recovery.settled_one");
  }
  WriteOptions as_seen;
  as_seen.conditions.if_match = seen.etag;
  Status gone = ctx.blobs.Delete(RecordBlobName(rec.txn_id), as_seen);
  return gone.ok() || gone.IsNotFound() || gone.IsConflict() ? Status::OK() : gone;
}

Status ResolveBlob(const ResolveContext& ctx, std::string_view blob, const BlobProperties& seen) {
  BT_RETURN_IF_ERROR(RefuseProtocolOneMark(seen, blob));
  if (!PrewritingTransaction(seen).empty()) return SettleIntent(ctx, blob, seen);
  // An intent rewritten plain whose lease was not let go yet: the lease id
  // is the transaction's id, so this lets go of that lease and no other.
  const std::string stamp = MetadataOf(seen, kTxnMetadata);
  if (!stamp.empty() && seen.lease_status == LeaseStatus::kLocked) {
    AccessConditions at;
    at.if_match = seen.etag;
    (void)ctx.blobs.ReleaseLease(blob, stamp, at);
  }
  return Status::OK();
}

namespace {

// The record `name` as stored now: NotFound if gone, Corruption if damaged
// (or of the first protocol).
Result<std::pair<TxnRecord, BlobProperties>> ReadRecord(BlobStore& blobs, const std::string& name) {
  BT_ASSIGN_OR_RETURN(GetResult got, blobs.Get(name, {}));
  BT_ASSIGN_OR_RETURN(TxnRecord rec, DecodeRecord(got.data, name));
  return std::make_pair(std::move(rec), std::move(got.properties));
}

// What Recover found of the transactions it met: those it settled, those
// still at work (with the blobs holding their intents), damaged records.
struct Sweep {
  bool discard_damaged = false;
  std::set<std::string> settled;
  std::map<std::string, std::vector<std::string>> in_flight;
  std::vector<Status> damaged;  // records and markers (the others are settled all the same)
  int discarded = 0;            // damaged records deleted (discard_damaged): each a transaction
};

// Calls fn(name, GetResult) for every blob under `prefix` that is still
// there when read, page by page.
template <typename Fn>
Status ForEachStored(BlobStore& blobs, const char* prefix, Fn fn) {
  ListOptions list;
  list.prefix = prefix;
  int pages = 0;
  for (;;) {
    BT_ASSIGN_OR_RETURN(ListPage page, blobs.List(list));
    for (const BlobItem& item : page.items) {
      auto got = blobs.Get(item.name, {});
      if (got.status().IsNotFound()) continue;  // finished meanwhile
      if (!got.ok()) return got.status();
      BT_RETURN_IF_ERROR(fn(item.name, *got));
    }
    BT_ASSIGN_OR_RETURN(bool more, NextListPage(list, page, &pages));
    if (!more) return Status::OK();
  }
}

// A record or marker that does not decode (`why`): reported, or with
// discard_damaged deleted at the version seen (a record counted as a
// transaction resolved; a marker is not one, its record tells).
Status Damaged(BlobStore& blobs, const std::string& name, const GetResult& got, const Status& why,
               bool record, Sweep& sweep) {
  if (!sweep.discard_damaged) {
    sweep.damaged.push_back(why);
    return Status::OK();
  }
  WriteOptions as_seen;  // only the damaged version seen
  as_seen.conditions.if_match = got.properties.etag;
  Status gone = blobs.Delete(name, as_seen);
  if (!gone.ok() && !gone.IsNotFound()) return gone;
  if (record) ++sweep.discarded;
  return Status::OK();
}

// Settles blob `name` (as `seen` shows it) if transaction `txn` (or, for
// "", any transaction) holds it: its intent as a writer would (finished,
// undone, or decided aborted once its leases ran out), or a lease left on it
// after its intent was rewritten. True if it is still held: its coordinator
// may be at work (noted in `sweep`), or its record is damaged (left for the
// records' pass, which reports or discards it).
Result<bool> SettleHeld(const ResolveContext& ctx, const std::string& name,
                        const BlobProperties& seen, std::string_view txn, Sweep& sweep) {
  BT_RETURN_IF_ERROR(RefuseProtocolOneMark(seen, name));
  const std::string holder = PrewritingTransaction(seen);
  if (holder.empty() || (!txn.empty() && holder != txn)) {
    // An intent rewritten plain whose lease was not let go yet.
    const bool ours = txn.empty() || MetadataOf(seen, kTxnMetadata) == txn;
    if (ours && seen.lease_status == LeaseStatus::kLocked)
      BT_RETURN_IF_ERROR(ResolveBlob(ctx, name, seen));
    return false;
  }
  Status s = SettleIntent(ctx, name, seen, SettleAs::kRecovery);
  if (s.IsBusy()) {
    std::vector<std::string>& held = sweep.in_flight[holder];
    // Met once by the scan of every entity, and again through its record.
    if (std::find(held.begin(), held.end(), name) == held.end()) held.push_back(name);
    return true;
  }
  if (s.IsCorruption() && ReadRecord(ctx.blobs, RecordBlobName(holder)).status().IsCorruption())
    return true;
  if (!s.ok()) return s.WithContext("settling " + name);
  sweep.settled.insert(holder);
  BT_SYNC_POINT("recovery.settled_one");
  return false;
}

// Every intent in the container (a listing of every entity): what no record
// names, such as the intents of a release before records were created
// pending (RecoverOptions::scan_everything).
Status SettleAllIntents(const ResolveContext& ctx, Sweep& sweep) {
  ListOptions list;
  list.prefix = kTablePrefix;
  int pages = 0;
  for (;;) {
    BT_ASSIGN_OR_RETURN(ListPage page, ctx.blobs.List(list));
    for (const BlobItem& item : page.items)
      BT_RETURN_IF_ERROR(SettleHeld(ctx, item.name, item.properties, "", sweep).status());
    BT_ASSIGN_OR_RETURN(bool more, NextListPage(list, page, &pages));
    if (!more) return Status::OK();
  }
}

// Whether any of `locks` is leased: the coordinator holding it may be at work.
Result<bool> AnyLeased(BlobStore& blobs, const std::vector<std::string>& locks) {
  for (const std::string& lock : locks) {
    auto head = blobs.Head(lock, {});
    if (head.status().IsNotFound()) continue;
    if (!head.ok()) return head.status();
    if (head->properties.lease_status == LeaseStatus::kLocked) return true;
  }
  return false;
}

// Deletes record or marker `name` at the version `seen`, if still there.
Status DeleteAsSeen(BlobStore& blobs, const std::string& name, const BlobProperties& seen) {
  WriteOptions as_seen;
  as_seen.conditions.if_match = seen.etag;
  Status gone = blobs.Delete(name, as_seen);
  return gone.ok() || gone.IsNotFound() || gone.IsConflict() ? Status::OK() : gone;
}

// Settles every entity of `blobs` that transaction `txn` holds. True if one
// is still held: its coordinator may be at work, or its record is damaged.
Result<bool> SettleEach(const ResolveContext& ctx, const std::vector<std::string>& blobs,
                        const std::string& txn, Sweep& sweep) {
  bool held = false;
  for (const std::string& blob : blobs) {
    auto head = ctx.blobs.Head(blob, {});
    if (head.status().IsNotFound()) continue;
    if (!head.ok()) return head.status();
    BT_ASSIGN_OR_RETURN(bool still, SettleHeld(ctx, blob, head->properties, txn, sweep));
    held = held || still;
  }
  return held;
}

// A record met by Recover (invariant P1: what a record names is all its
// transaction may hold). Committed: finished and removed. Pending or
// aborted: each intent it names settled as a writer whose coordinator
// judgement is the stripes' (SettleIntent, kRecovery); then, nothing of it
// held, judged by the stripes it names: any leased, its coordinator may be
// at work (a pending one is in flight; an aborted one stays, since that
// coordinator may still place an intent it would lease); none, a pending
// one is decided aborted and the record removed. No clock decides (X2: an
// aborted or missing record fences the commit point for good).
Status RecoverRecord(const ResolveContext& ctx, const std::string& name, const TxnRecord& rec,
                     const BlobProperties& seen, Sweep& sweep) {
  if (rec.state == TxnState::kCommitted) {
    BT_RETURN_IF_ERROR(FinishRecord(ctx, rec, seen));
    sweep.settled.insert(rec.txn_id);
    return Status::OK();
  }
  std::vector<std::string> blobs;
  for (const TxnWrite& w : rec.writes) blobs.push_back(w.blob);
  BT_ASSIGN_OR_RETURN(bool held, SettleEach(ctx, blobs, rec.txn_id, sweep));
  if (held) return Status::OK();
  if (rec.state == TxnState::kPending) {
    BT_ASSIGN_OR_RETURN(bool alive, AnyLeased(ctx.blobs, rec.locks));
    if (alive) {
      sweep.in_flight[rec.txn_id];  // listed, holding nothing
      return Status::OK();
    }
    BT_ASSIGN_OR_RETURN(Outcome outcome, DecideAbort(ctx.blobs, rec.txn_id));
    BT_SYNC_POINT("recovery.decided");
    if (outcome == Outcome::kCommitted) {  // its commit point got there first
      auto now = ctx.blobs.Get(name, {});
      if (now.status().IsNotFound()) return Status::OK();
      BT_RETURN_IF_ERROR(now.status());
      BT_ASSIGN_OR_RETURN(TxnRecord committed, DecodeRecord(now->data, name));
      return RecoverRecord(ctx, name, committed, now->properties, sweep);
    }
    if (outcome != Outcome::kAborted) return Status::OK();
    sweep.settled.insert(rec.txn_id);
  }
  // Aborted now: deleted once no stripe it names is leased, looked at
  // first, and then no entity it names holds an intent of T. In that order
  // (the Spin model's finding 3): a coordinator not yet aware of the
  // decision may place and lease an intent while its stripe is leased, and
  // be killed; looked at after its stripe's lease ran out, that intent was
  // leased before it ran out, so the look at the entities that follows
  // finds it (and settles it), where a look at the entities first could
  // miss it and the stripe, looked at after, be free already (P1).
  BT_ASSIGN_OR_RETURN(bool alive, AnyLeased(ctx.blobs, rec.locks));
  if (alive) return Status::OK();
  BT_ASSIGN_OR_RETURN(held, SettleEach(ctx, blobs, rec.txn_id, sweep));
  if (held) return Status::OK();
  if (rec.state == TxnState::kPending) {
    Status gone = ctx.blobs.Delete(name, {});  // aborted, by us: nothing of it is left
    return gone.ok() || gone.IsNotFound() ? Status::OK() : gone;
  }
  return DeleteAsSeen(ctx.blobs, name, seen);
}

// The markers of a release before pending records (its transactions have
// no pending record): each blob a marker names settled, then the marker
// removed once none is held.
Status SettleMarked(const ResolveContext& ctx, Sweep& sweep) {
  return ForEachStored(
      ctx.blobs, kMarkerPrefix, [&](const std::string& name, const GetResult& got) {
        const std::string txn = name.substr(std::string(kMarkerPrefix).size());
        auto marker = DecodeMarker(got.data, name);
        if (!marker.ok())
          return Damaged(ctx.blobs, name, got, marker.status(), /*record=*/false, sweep);
        BT_ASSIGN_OR_RETURN(bool held, SettleEach(ctx, marker->blobs, txn, sweep));
        return held ? Status::OK() : DeleteAsSeen(ctx.blobs, name, got.properties);
      });
}

// Every record, as RecoverRecord says.
Status SettleRecords(const ResolveContext& ctx, Sweep& sweep) {
  return ForEachStored(
      ctx.blobs, kRecordPrefix, [&](const std::string& name, const GetResult& got) {
        auto rec = DecodeRecord(got.data, name);
        if (!rec.ok() && IsProtocolOneRecord(got.data)) return rec.status();  // refused
        if (!rec.ok()) return Damaged(ctx.blobs, name, got, rec.status(), /*record=*/true, sweep);
        return RecoverRecord(ctx, name, *rec, got.properties, sweep);
      });
}

}  // namespace

Result<int> RecoverAbandoned(const ResolveContext& ctx, bool discard_damaged, bool scan_everything,
                             std::vector<InFlightTxn>* in_flight_out) {
  Sweep sweep;
  sweep.discard_damaged = discard_damaged;
  if (scan_everything) {
    BT_RETURN_IF_ERROR(SettleAllIntents(ctx, sweep));
    BT_RETURN_IF_ERROR(SettleMarked(ctx, sweep));
  }
  BT_RETURN_IF_ERROR(SettleRecords(ctx, sweep));
  const int resolved = static_cast<int>(sweep.settled.size()) + sweep.discarded;
  if (in_flight_out != nullptr)
    for (auto& [txn, blobs] : sweep.in_flight) in_flight_out->push_back({txn, std::move(blobs)});
  if (sweep.damaged.empty()) return resolved;
  return Status::Corruption(
      std::to_string(resolved) + " transaction(s) resolved; " +
      std::to_string(sweep.damaged.size()) +
      " record(s) or marker(s) damaged, the first: " + sweep.damaged.front().message());
}

}  // namespace blobtable::internal
