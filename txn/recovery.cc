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
  // Aborted: its intents are undone by whoever meets them; the record stays
  // (it is the fence against a commit point still on its way), removed by
  // Recover once it is old.
  if (rec.state != TxnState::kCommitted) return Status::OK();
  for (const TxnWrite& w : rec.writes) {
    auto got = ctx.blobs.Get(w.blob, {});
    if (got.status().IsNotFound()) continue;
    if (!got.ok()) return got.status();
    if (got->properties.etag != w.intent_etag ||
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
    // Met once by the scan of every entity, and again through the marker.
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

// Every intent in the container (a listing of every entity): what a marker
// does not name, such as the intents of a coordinator that died in its
// first round before its marker was written (RecoverOptions::scan_everything).
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

// How long an aborted record is kept: it is the fence that stops a commit
// point still on its way (a coordinator that stalled between its last lease
// check and its commit point), so it outlives any such stall that is not
// absurd.
constexpr auto kAbortedRecordLifetime = std::chrono::hours(1);

// A record met by Recover: a committed one is finished and removed (true:
// it was still to do), an old aborted one removed.
Result<bool> RecoverRecord(const ResolveContext& ctx, const std::string& name, const TxnRecord& rec,
                           const BlobProperties& seen) {
  if (rec.state == TxnState::kCommitted) {
    BT_RETURN_IF_ERROR(FinishRecord(ctx, rec, seen));
    return true;
  }
  if (ctx.clock.Now() - seen.last_modified > kAbortedRecordLifetime) {
    WriteOptions as_seen;
    as_seen.conditions.if_match = seen.etag;
    Status gone = ctx.blobs.Delete(name, as_seen);
    if (!gone.ok() && !gone.IsNotFound() && !gone.IsConflict()) return gone;
  }
  return false;
}

// The marker `name` of transaction `txn` once none of its blobs holds the
// transaction: deleted if its record says committed (its finishing is done:
// it places no intent after its commit point); otherwise kept as long as an
// aborted record is, because its coordinator, if it only stalled, may still
// place an intent it should find (P1).
Status RetireMarker(const ResolveContext& ctx, const std::string& name, std::string_view txn,
                    const BlobProperties& seen) {
  auto outcome = OutcomeOf(ctx.blobs, txn);
  if (!outcome.ok()) return outcome.status().IsCorruption() ? Status::OK() : outcome.status();
  if (*outcome != Outcome::kCommitted &&
      ctx.clock.Now() - seen.last_modified <= kAbortedRecordLifetime)
    return Status::OK();
  WriteOptions as_seen;
  as_seen.conditions.if_match = seen.etag;
  Status gone = ctx.blobs.Delete(name, as_seen);
  return gone.ok() || gone.IsNotFound() || gone.IsConflict() ? Status::OK() : gone;
}

// Every transaction a marker names (one in flight, or left by a coordinator
// that died): each blob it names settled, then the marker retired.
Status SettleMarked(const ResolveContext& ctx, Sweep& sweep) {
  return ForEachStored(
      ctx.blobs, kMarkerPrefix, [&](const std::string& name, const GetResult& got) {
        const std::string txn = name.substr(std::string(kMarkerPrefix).size());
        auto marker = DecodeMarker(got.data, name);
        if (!marker.ok())
          return Damaged(ctx.blobs, name, got, marker.status(), /*record=*/false, sweep);
        bool held = false;
        for (const std::string& blob : marker->blobs) {
          auto head = ctx.blobs.Head(blob, {});
          if (head.status().IsNotFound()) continue;
          if (!head.ok()) return head.status();
          BT_ASSIGN_OR_RETURN(bool still, SettleHeld(ctx, blob, head->properties, txn, sweep));
          held = held || still;
        }
        return held ? Status::OK() : RetireMarker(ctx, name, txn, got.properties);
      });
}

// Every record: committed ones finished and removed (counted in `resolved`
// if not settled already), old aborted ones removed.
Status SettleRecords(const ResolveContext& ctx, Sweep& sweep, int& resolved) {
  return ForEachStored(
      ctx.blobs, kRecordPrefix, [&](const std::string& name, const GetResult& got) {
        const std::string txn = name.substr(std::string(kRecordPrefix).size());
        auto rec = DecodeRecord(got.data, name);
        if (!rec.ok() && IsProtocolOneRecord(got.data)) return rec.status();  // refused
        if (!rec.ok()) return Damaged(ctx.blobs, name, got, rec.status(), /*record=*/true, sweep);
        BT_ASSIGN_OR_RETURN(bool was_to_do, RecoverRecord(ctx, name, *rec, got.properties));
        if (was_to_do && !sweep.settled.count(txn)) ++resolved;
        return Status::OK();
      });
}

}  // namespace

Result<int> RecoverAbandoned(const ResolveContext& ctx, bool discard_damaged, bool scan_everything,
                             std::vector<InFlightTxn>* in_flight_out) {
  Sweep sweep;
  sweep.discard_damaged = discard_damaged;
  if (scan_everything) BT_RETURN_IF_ERROR(SettleAllIntents(ctx, sweep));
  BT_RETURN_IF_ERROR(SettleMarked(ctx, sweep));
  int resolved = static_cast<int>(sweep.settled.size());
  BT_RETURN_IF_ERROR(SettleRecords(ctx, sweep, resolved));
  resolved += sweep.discarded;
  if (in_flight_out != nullptr)
    for (auto& [txn, blobs] : sweep.in_flight) in_flight_out->push_back({txn, std::move(blobs)});
  if (sweep.damaged.empty()) return resolved;
  return Status::Corruption(
      std::to_string(resolved) + " transaction(s) resolved; " +
      std::to_string(sweep.damaged.size()) +
      " record(s) or marker(s) damaged, the first: " + sweep.damaged.front().message());
}

}  // namespace blobtable::internal
