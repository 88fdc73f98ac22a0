#include "txn/recovery.h"

#include <set>

#include "kv/blob_naming.h"
#include "kv/macros.h"
#include "kv/random.h"
#include "txn/sync_point.h"
#include "txn/txn_record.h"

namespace blobtable {
namespace {

std::string MetaOf(const BlobProperties& p, const char* name) {
  auto it = p.metadata.find(name);
  return it == p.metadata.end() ? "" : it->second;
}

// Applies one committed write by the replay rule, with the transaction's
// lease id. Busy if another party leases the entity right now.
Status RollForward(BlobStore& blobs, const TxnRecord& rec, const TxnWrite& w, int lease_seconds) {
  auto head = blobs.Head(w.blob, {});
  if (head.status().IsNotFound()) {
    if (w.op == TxnWrite::kDelete) return Status::OK();  // deleted: done
    // The reservation is gone: someone deleted the entity after the commit
    // finished it... or never existed. Nothing recorded to compare: skip.
    return Status::OK();
  }
  if (!head.ok()) return head.status();
  if (MetaOf(head->properties, kTxnMetadata) == rec.txn_id) {
    // Stamped: applied already. Let go of its lease if we still hold it.
    (void)blobs.ReleaseLease(w.blob, rec.lease_id, {});
    return Status::OK();
  }
  AccessConditions at_seen;
  at_seen.if_match = w.seen_etag;
  auto lease = blobs.AcquireLease(w.blob, lease_seconds, rec.lease_id, at_seen);
  if (lease.status().IsConflict()) return Status::OK();  // a later writer won: skip
  if (!lease.ok()) return lease.status();
  Status applied;
  if (w.op == TxnWrite::kDelete) {
    WriteOptions o;
    o.lease_id = rec.lease_id;
    o.conditions.if_match = w.seen_etag;
    applied = blobs.Delete(w.blob, o);
    return applied.IsNotFound() ? Status::OK() : applied;
  }
  PutOptions o;
  o.lease_id = rec.lease_id;
  o.conditions.if_match = w.seen_etag;
  o.metadata = {{kTxnMetadata, rec.txn_id}};
  applied = blobs.Put(w.blob, w.body, o).status();
  if (applied.IsConflict()) return Status::OK();  // a later writer won
  if (!applied.ok()) return applied;
  (void)blobs.ReleaseLease(w.blob, rec.lease_id, {});
  return Status::OK();
}

}  // namespace

Status ClearMark(BlobStore& blobs, std::string_view blob, const BlobProperties& seen,
                 const std::string& txn_id, const std::string& lease_id, int lease_seconds) {
  AccessConditions at;
  at.if_match = seen.etag;
  bool reservation = MetaOf(seen, kReservationMetadata) == txn_id;
  bool intent = MetaOf(seen, kIntentMetadata) == txn_id;
  if (!reservation && !intent) {
    (void)blobs.ReleaseLease(blob, lease_id, {});  // succeeds only if still its lease
    return Status::OK();
  }
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
  (void)blobs.SetMetadata(blob, clean, o);
  (void)blobs.ReleaseLease(blob, lease_id, {});
  return Status::OK();
}

Status ClearOrphanMark(BlobStore& blobs, std::string_view blob, int lease_seconds) {
  auto head = blobs.Head(blob, {});
  if (!head.ok()) return head.status().IsNotFound() ? Status::OK() : head.status();
  std::string txn = MetaOf(head->properties, kReservationMetadata);
  if (txn.empty()) txn = MetaOf(head->properties, kIntentMetadata);
  if (txn.empty()) return Status::OK();
  auto record = blobs.Head(RecordBlobName(txn), {});
  if (record.ok()) return Status::Busy("transaction " + txn + " still has a record");
  if (!record.status().IsNotFound()) return record.status();
  return ClearMark(blobs, blob, head->properties, txn, NewGuid(), lease_seconds);
}

namespace {

// Undoes what a pending transaction may have done to one entity.
Status Undo(BlobStore& blobs, const TxnRecord& rec, const std::string& blob, int lease_seconds) {
  auto head = blobs.Head(blob, {});
  if (head.status().IsNotFound()) return Status::OK();
  if (!head.ok()) return head.status();
  // Everything below is conditional on the version just read: a plain
  // writer that got in meanwhile (a lease ran out) is never undone.
  return ClearMark(blobs, blob, head->properties, rec.txn_id, rec.lease_id, lease_seconds);
}

void ClearLockMarks(BlobStore& blobs, const TxnRecord& rec, int lease_seconds) {
  for (const std::string& lock : rec.locks) {
    auto head = blobs.Head(lock, {});
    if (!head.ok() || MetaOf(head->properties, kTxnMetadata) != rec.txn_id) continue;
    // Take it with the transaction's own id (works while it is its lease or
    // expired), at the version read; if someone else holds it now, they
    // overwrite the mark.
    AccessConditions at;
    at.if_match = head->properties.etag;
    if (!blobs.AcquireLease(lock, lease_seconds, rec.lease_id, at).ok()) continue;
    WriteOptions o;
    o.lease_id = rec.lease_id;
    o.conditions.if_match = head->properties.etag;
    (void)blobs.SetMetadata(lock, {}, o);
    (void)blobs.ReleaseLease(lock, rec.lease_id, {});
  }
}

}  // namespace

namespace {

// Under the record's lease `resolver`: finishes or undoes the transaction
// and removes its record.
Status Resolve(BlobStore& blobs, const std::string& name, const std::string& body,
               const std::string& resolver, int lease_seconds) {
  BT_ASSIGN_OR_RETURN(TxnRecord rec, DecodeRecord(body, name));
  std::set<std::string> written;
  if (rec.state == TxnState::kCommitted) {
    for (const TxnWrite& w : rec.writes) {
      BT_RETURN_IF_ERROR(RollForward(blobs, rec, w, lease_seconds));
      written.insert(w.blob);
    }
  } else if (rec.state == TxnState::kPending) {
    // Mark it aborted first: a resolver that dies mid-undo leaves a record
    // that says so.
    TxnRecord aborted = rec;
    aborted.state = TxnState::kAborted;
    PutOptions o;
    o.lease_id = resolver;
    BT_RETURN_IF_ERROR(blobs.Put(name, EncodeRecord(aborted), o).status());
  }
  // Entities it reserved or marked and did not write (all of them unless it
  // committed): undo.
  for (const std::string& e : rec.entities)
    if (!written.count(e)) BT_RETURN_IF_ERROR(Undo(blobs, rec, e, lease_seconds));
  ClearLockMarks(blobs, rec, lease_seconds);
  WriteOptions del;
  del.lease_id = resolver;
  Status s = blobs.Delete(name, del);
  return s.IsNotFound() ? Status::OK() : s;
}

}  // namespace

Status ResolveTransaction(BlobStore& blobs, std::string_view txn_id, int lease_seconds) {
  const std::string name = RecordBlobName(txn_id);
  // A cheap look first: a record whose lease is held has a live coordinator.
  auto look = blobs.Head(name, {});
  if (look.status().IsNotFound()) return Status::OK();
  if (!look.ok()) return look.status();
  if (look->properties.lease_status == LeaseStatus::kLocked)
    return Status::Busy("transaction " + std::string(txn_id) + " is still in progress");
  auto got = blobs.Get(name, {});
  if (got.status().IsNotFound()) return Status::OK();
  if (!got.ok()) return got.status();
  // Taking the record's lease fences its coordinator: its commit-point write
  // and renewals need a lease it no longer has.
  const std::string resolver = NewGuid();
  AccessConditions same;
  same.if_match = got->properties.etag;
  auto lease = blobs.AcquireLease(name, lease_seconds, resolver, same);
  if (lease.status().IsNotFound()) return Status::OK();
  if (!lease.ok()) {
    if (lease.status().IsBusy() || lease.status().IsConflict())
      return Status::Busy("transaction " + std::string(txn_id) + " is still in progress");
    return lease.status();
  }
  BT_SYNC_POINT("recovery.record_taken");
  Status s = Resolve(blobs, name, got->data, resolver, lease_seconds);
  if (!s.ok()) (void)blobs.ReleaseLease(name, resolver, {});  // let the next one try at once
  return s;
}

Status ResolvePartitionLock(BlobStore& blobs, std::string_view lock_blob, int lease_seconds) {
  auto head = blobs.Head(lock_blob, {});
  if (head.status().IsNotFound()) return Status::OK();
  if (!head.ok()) return head.status();
  auto it = head->properties.metadata.find(kTxnMetadata);
  if (it == head->properties.metadata.end() || it->second.empty()) return Status::OK();
  return ResolveTransaction(blobs, it->second, lease_seconds);
}

Result<int> RecoverAbandoned(BlobStore& blobs, int lease_seconds) {
  int resolved = 0;
  ListOptions list;
  list.prefix = kRecordPrefix;
  do {
    BT_ASSIGN_OR_RETURN(ListPage page, blobs.List(list));
    for (const BlobItem& item : page.items) {
      if (item.properties.lease_status == LeaseStatus::kLocked) continue;  // its coordinator is at work
      Status s = ResolveTransaction(blobs, item.name.substr(std::string(kRecordPrefix).size()),
                                    lease_seconds);
      if (s.ok()) ++resolved;
      else if (!s.IsBusy()) return s;
    }
    list.marker = page.next_marker;
  } while (!list.marker.empty());
  return resolved;
}

}  // namespace blobtable
