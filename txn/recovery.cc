// SPDX-License-Identifier: Apache-2.0
#include "txn/recovery.h"

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

// Every intent in the container, settled as a writer would (finished,
// undone, or decided aborted once its leases ran out). Adds the
// transactions settled to `settled`, those still at work to `in_flight`.
// An intent whose record is damaged is left for the records' pass, which
// reports (or discards) that record.
Status SettleAllIntents(const ResolveContext& ctx, std::set<std::string>& settled,
                        std::map<std::string, std::vector<std::string>>& in_flight) {
  ListOptions list;
  list.prefix = kTablePrefix;
  int pages = 0;
  for (;;) {
    BT_ASSIGN_OR_RETURN(ListPage page, ctx.blobs.List(list));
    for (const BlobItem& item : page.items) {
      BT_RETURN_IF_ERROR(RefuseProtocolOneMark(item.properties, item.name));
      const std::string txn = PrewritingTransaction(item.properties);
      if (txn.empty()) {
        // An intent rewritten plain whose lease was not let go yet.
        if (item.properties.lease_status == LeaseStatus::kLocked)
          BT_RETURN_IF_ERROR(ResolveBlob(ctx, item.name, item.properties));
        continue;
      }
      Status s = SettleIntent(ctx, item.name, item.properties, SettleAs::kRecovery);
      if (s.IsBusy()) {
        in_flight[txn].push_back(item.name);
        continue;
      }
      if (s.IsCorruption() && ReadRecord(ctx.blobs, RecordBlobName(txn)).status().IsCorruption())
        continue;
      if (!s.ok()) return s.WithContext("settling " + item.name);
      settled.insert(txn);
      BT_SYNC_POINT("recovery.settled_one");
    }
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
      auto got = ctx.blobs.Get(item.name, {});
      if (got.status().IsNotFound()) continue;  // finished meanwhile
      if (!got.ok()) return got.status();
      auto rec = DecodeRecord(got->data, item.name);
      if (rec.ok()) {
        BT_ASSIGN_OR_RETURN(bool was_to_do, RecoverRecord(ctx, item.name, *rec, got->properties));
        if (was_to_do && !settled.count(txn)) ++resolved;
        continue;
      }
      if (IsProtocolOneRecord(got->data)) return rec.status();  // refused
      if (!discard_damaged) {
        damaged.push_back(rec.status());
        continue;
      }
      WriteOptions as_seen;  // only the damaged version seen
      as_seen.conditions.if_match = item.properties.etag;
      Status gone = ctx.blobs.Delete(item.name, as_seen);
      if (!gone.ok() && !gone.IsNotFound()) return gone;
      ++resolved;
    }
    BT_ASSIGN_OR_RETURN(bool more, NextListPage(list, page, &pages));
    if (!more) break;
  }
  if (in_flight_out != nullptr)
    for (auto& [txn, blobs] : in_flight) in_flight_out->push_back({txn, std::move(blobs)});
  if (damaged.empty()) return resolved;
  return Status::Corruption(std::to_string(resolved) + " transaction(s) resolved; " +
                            std::to_string(damaged.size()) +
                            " record(s) damaged, the first: " + damaged.front().message());
}

}  // namespace blobtable::internal
