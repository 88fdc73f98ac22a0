// SPDX-License-Identifier: Apache-2.0
#include "devtools/stress/sim/protocol_monitor.h"

#include "devtools/stress/sim/sim_scheduler.h"
#include "txn/intent_resolver.h"
#include "txn/recovery.h"
#include "util/macros.h"
#include "util/stored_format.h"

namespace blobtable::sim {
namespace {

std::string PrewriteIn(const Metadata& m) {
  auto it = m.find(internal::kPrewriteMetadata);
  return it == m.end() ? "" : it->second;
}

bool Never(const internal::EntityIntent&, const BlobProperties&) { return false; }

}  // namespace

// The finishing put: the new body, stamped with the transaction, and a
// btsame list (space-separated) naming the intent's own ETag, or the
// version before it (an intent that keeps the version as it was may be
// finished under the older handle).
bool ProtocolMonitor::FinishesCommitted(const internal::EntityIntent& i, const BlobProperties& cur,
                                        std::string_view body, const Metadata& metadata) {
  auto stamp = metadata.find(internal::kTxnMetadata);
  auto same = metadata.find(internal::kSameAsMetadata);
  if (!i.next_exists || body != i.next_body || stamp == metadata.end() ||
      stamp->second != i.txn_id || same == metadata.end())
    return false;
  // A new version is named by the intent's ETag; an entity only read keeps
  // its version, named by the ETag the intent replaced (H1).
  return internal::NamesVersion(same->second, i.reads_only ? i.prev_etag : cur.etag);
}

Result<WriteResult> ProtocolMonitor::Put(std::string_view n, std::string_view d,
                                         const PutOptions& o) {
  auto finishes = [&](const internal::EntityIntent& i, const BlobProperties& cur) {
    if (!PrewriteIn(o.metadata).empty()) {
      // The next transaction's intent, over the new version (under either
      // handle when the intent left the version as it was).
      auto next = internal::DecodeIntent(d, n);
      const bool same_version = i.prev_exists && i.reads_only;
      return next.ok() && next->prev_exists == i.next_exists && next->prev_body == i.next_body &&
             (next->prev_etag == cur.etag || (same_version && next->prev_etag == i.prev_etag));
    }
    if (FinishesCommitted(i, cur, d, o.metadata)) return true;
    // Its lease broken (a lease-break fault), a committed intent is no
    // longer fenced by it: a write may land on it as a write after the
    // committed version, never as its undo (W1): not stamped for the
    // transaction, not naming the version before.
    auto stamp = o.metadata.find(internal::kTxnMetadata);
    auto same = o.metadata.find(internal::kSameAsMetadata);
    const bool undo = (stamp != o.metadata.end() && stamp->second == i.txn_id) ||
                      (same != o.metadata.end() && !i.prev_etag.empty() &&
                       internal::NamesVersion(same->second, i.prev_etag));
    return cur.lease_state == LeaseState::kBroken && !undo;
  };
  return Watch(n, o.lease_id, "put", finishes, [&] { return BlobStoreWrapper::Put(n, d, o); });
}

Status ProtocolMonitor::Delete(std::string_view n, const WriteOptions& o) {
  // Or, its lease broken, a delete after the committed version: one over
  // an entity that was there before cannot be its undo (that is a put).
  auto finishes = [](const internal::EntityIntent& i, const BlobProperties& cur) {
    return !i.next_exists || (cur.lease_state == LeaseState::kBroken && i.prev_exists);
  };
  return Watch(n, o.lease_id, "delete", finishes, [&] { return BlobStoreWrapper::Delete(n, o); });
}

Result<WriteResult> ProtocolMonitor::SetMetadata(std::string_view n, const Metadata& m,
                                                 const WriteOptions& o) {
  return Watch(n, o.lease_id, "metadata", Never,
               [&] { return BlobStoreWrapper::SetMetadata(n, m, o); });
}

Result<LeaseResult> ProtocolMonitor::AcquireLease(std::string_view n, int d, std::string_view p,
                                                  const LeaseOptions& c) {
  auto no_write = [](const internal::EntityIntent&, const BlobProperties&) { return true; };
  return Watch(n, std::string(p), "lease", no_write,
               [&] { return BlobStoreWrapper::AcquireLease(n, d, p, c); });
}

// A batch is one request: every step that writes is checked before it.
BatchResult ProtocolMonitor::CommitBatch(const std::vector<BatchOp>& ops) {
  std::vector<std::string> around;
  for (const BatchOp& op : ops)
    if (op.kind != BatchOp::Kind::kCheck) around.push_back(Around(op.blob, Never));
  BatchResult r = BlobStoreWrapper::CommitBatch(ops);
  if (r.status.ok())
    for (const std::string& txn : around)
      if (!txn.empty()) Flag("an atomic batch wrote around committed transaction " + txn + "\n");
  return r;
}

void ProtocolMonitor::Flag(const std::string& what) {
  if (sink != nullptr) *sink += what;
}

std::optional<internal::TxnRecord> ProtocolMonitor::Committed(const std::string& txn) {
  auto record = target().Get(internal::RecordBlobName(txn), {});
  if (!record.ok()) return std::nullopt;
  auto rec = internal::DecodeRecord(record->data, "");
  if (!rec.ok() || rec->state != internal::TxnState::kCommitted) return std::nullopt;
  return *rec;
}

// Which committed transaction a successful write on `name` would go around
// ("" if none).
std::string ProtocolMonitor::Around(std::string_view name, const Finishes& finishes) {
  if (name.find("/e/") == std::string_view::npos) return "";
  auto cur = target().Get(name, {});
  if (!cur.ok()) return "";
  const std::string pw = internal::PrewritingTransaction(cur->properties);
  if (pw.empty()) return "";
  auto intent = internal::DecodeIntent(cur->data, name);
  if (!intent.ok()) return "";
  // Only the intent its committed record names (X1): another of its
  // attempts on this blob was let go of, never committed.
  auto committed = Committed(pw);
  if (!committed || !internal::CommitsIntent(*committed, name, cur->properties.etag)) return "";
  return finishes(*intent, cur->properties) ? "" : pw;
}

}  // namespace blobtable::sim
