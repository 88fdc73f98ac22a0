// SPDX-License-Identifier: Apache-2.0
#include "txn/intent_resolver.h"

#include "txn/finisher.h"

#include "model/inline_body.h"
#include "testing/sync_point.h"
#include "txn/txn_record.h"
#include "util/macros.h"
#include "util/stored_format.h"

namespace blobtable::internal {
std::string MetadataOf(const BlobProperties& p, const char* name) {
  auto it = p.metadata.find(name);
  return it == p.metadata.end() ? "" : it->second;
}

namespace {

Outcome FromState(TxnState s) {
  return s == TxnState::kCommitted ? Outcome::kCommitted
         : s == TxnState::kAborted ? Outcome::kAborted
                                   : Outcome::kUndecided;
}

// Whether the coordinator of an undecided transaction whose intent is
// leased may still be at work: its partition lock is leased, by someone
// other than the caller.
Result<bool> MayBeAlive(const ResolveContext& ctx, const EntityIntent& intent) {
  if (ctx.own_locks != nullptr && ctx.own_locks->count(intent.lock)) return false;
  auto lock = ctx.blobs.Head(intent.lock, {});
  if (lock.status().IsNotFound()) return false;
  if (!lock.ok()) return lock.status();
  return lock->properties.lease_status == LeaseStatus::kLocked;
}

}  // namespace

std::string SameAsOf(const BlobProperties& p) { return MetadataOf(p, kSameAsMetadata); }

namespace {

// Calls fn for each handle of list `same_as` (kSameAsMetadata's form), in
// order, until fn returns false.
template <typename Fn>
void EachHandle(std::string_view same_as, Fn fn) {
  for (size_t at = 0; at < same_as.size();) {
    size_t end = same_as.find(' ', at);
    if (end == std::string_view::npos) end = same_as.size();
    std::string_view h = same_as.substr(at, end - at);
    if (!h.empty() && !fn(h)) return;
    at = end + 1;
  }
}

// Whether the blob is still at `etag` (read now): what a record read before
// says holds only then (R1). False if it moved on or is gone.
Result<bool> StillAt(BlobStore& blobs, std::string_view blob, const std::string& etag) {
  auto again = blobs.Head(blob, {});
  if (!again.ok() && !again.status().IsNotFound()) return again.status();
  return again.ok() && again->properties.etag == etag;
}

}  // namespace

bool NamesVersion(std::string_view same_as, std::string_view etag) {
  bool named = false;
  EachHandle(same_as, [&](std::string_view h) { return !(named = !etag.empty() && h == etag); });
  return named;
}

bool SameVersion(const BlobProperties& p, std::string_view etag) {
  return NamesVersion(MetadataOf(p, kSameAsMetadata), etag);
}

std::string ContinuedHandles(std::string_view etag, std::string_view same_as) {
  std::string out(etag);
  int n = 1;
  EachHandle(same_as, [&](std::string_view h) {
    if (h != etag) {
      out += ' ';
      out += h;
      ++n;
    }
    return n < kMaxHandles;
  });
  return out;
}

Result<Outcome> OutcomeOf(BlobStore& blobs, std::string_view txn_id, TxnRecord* read,
                          std::string* etag) {
  const std::string name = RecordBlobName(txn_id);
  auto got = blobs.Get(name, {});
  if (got.status().IsNotFound()) return Outcome::kUndecided;
  if (!got.ok()) return got.status();
  BT_ASSIGN_OR_RETURN(TxnRecord rec, DecodeRecord(got->data, name));
  const Outcome outcome = FromState(rec.state);
  if (read != nullptr) *read = std::move(rec);
  if (etag != nullptr) *etag = got->properties.etag;
  return outcome;
}

Outcome OutcomeOfIntent(Outcome outcome, const TxnRecord& record, std::string_view blob,
                        std::string_view etag) {
  if (outcome != Outcome::kCommitted) return outcome;
  return CommitsIntent(record, blob, etag) ? Outcome::kCommitted : Outcome::kAborted;
}

Result<Outcome> DecideAbort(BlobStore& blobs, std::string_view txn_id, const TxnWrite* met,
                            std::string_view met_lock) {
  const std::string name = RecordBlobName(txn_id);
  // A few turns: each failed condition means the record moved on (created
  // pending by its coordinator, or decided), and the next read says how.
  bool moved = false;  // a write of ours was refused (or its answer lost)
  for (int turn = 0; turn < 4; ++turn) {
    TxnRecord rec;
    std::string etag;
    BT_ASSIGN_OR_RETURN(Outcome now, OutcomeOf(blobs, txn_id, &rec, &etag));
    if (now != Outcome::kUndecided) return now;
    // A record stood in our way and is gone now: the transaction was
    // decided and finished meanwhile (a record is deleted only once no
    // intent of it is left), so what the caller read of its intents is
    // stale (found in a CI run: a coordinator that committed and finished
    // between a decider's create and its read).
    if (etag.empty() && moved) return Outcome::kUndecided;
    PutOptions o;
    if (etag.empty()) {
      // No record yet: its coordinator is in its first round, or died
      // there. An aborted one in its place makes its pending create fail.
      o.conditions.if_none_match = std::string(kAnyETag);
      rec.txn_id = std::string(txn_id);
      if (met != nullptr) rec.writes.push_back(*met);
      if (!met_lock.empty()) rec.locks.push_back(std::string(met_lock));
    } else {
      o.conditions.if_match = etag;  // the pending version: the commit point's condition
    }
    rec.state = TxnState::kAborted;
    if (met != nullptr) rec.met = met->blob;
    auto put = blobs.Put(name, EncodeRecord(rec), o);
    if (put.ok()) return Outcome::kAborted;
    // Decided meanwhile (or our own write, retried after a lost answer):
    // the record says how.
    if (!put.status().IsConflict() && !put.status().IsOutcomeUnknown() &&
        !put.status().IsNotFound())
      return put.status();
    moved = true;
  }
  return Status::Unavailable("transaction " + std::string(txn_id) +
                             ": its record kept changing while this client decided it");
}

Result<IntentView> PreviousVersion(std::string_view blob, const GetResult& seen) {
  BT_ASSIGN_OR_RETURN(EntityIntent intent, DecodeIntent(seen.data, blob));
  return IntentView{intent.prev_exists, intent.prev_body, intent.prev_etag, intent.prev_same};
}

Result<CommittedVersion> LookCommitted(BlobStore& blobs, std::string_view blob) {
  for (int moved = 0; moved < 100; ++moved) {
    auto cur = blobs.Get(blob, {});
    if (cur.status().IsNotFound()) return CommittedVersion{};
    BT_RETURN_IF_ERROR(cur.status());
    if (PrewritingTransaction(cur->properties).empty())
      return CommittedVersion{true, cur->properties.etag, SameAsOf(cur->properties),
                              std::move(cur->data)};
    BT_ASSIGN_OR_RETURN(std::optional<IntentView> view, ViewIntent(blobs, blob, *cur));
    if (!view) continue;
    if (!view->exists) return CommittedVersion{};
    return CommittedVersion{true, view->etag, view->handles, view->body};
  }
  return Status::Busy("blob " + std::string(blob) + ": kept changing while it was read");
}

Result<std::optional<IntentView>> ViewIntent(BlobStore& blobs, std::string_view blob,
                                             const GetResult& seen) {
  BT_ASSIGN_OR_RETURN(EntityIntent intent, DecodeIntent(seen.data, blob));
  // An entity only read is the version before, however its transaction
  // ends: no record to ask.
  if (intent.reads_only)
    return std::optional<IntentView>(IntentView{intent.prev_exists, intent.prev_body,
                                                intent.prev_etag, intent.prev_same, false});
  TxnRecord record;
  BT_ASSIGN_OR_RETURN(Outcome outcome, OutcomeOf(blobs, intent.txn_id, &record));
  if (outcome == Outcome::kCommitted && !CommitsIntent(record, blob, seen.properties.etag)) {
    // One intent names one attempt (X1): a committed record that does not
    // name this intent committed another attempt on the blob. This one was
    // let go of before the commit point; as of the read it is the version
    // before.
    return std::optional<IntentView>(
        IntentView{intent.prev_exists, intent.prev_body, intent.prev_etag, intent.prev_same, true});
  }
  if (outcome == Outcome::kCommitted)
    return std::optional<IntentView>(
        IntentView{intent.next_exists, intent.next_body, seen.properties.etag, "", true, true});
  {
    // No record, or an aborted one: either tells only together with the
    // intent still in place after the record was read (invariant R1 of
    // docs/protocol.md). A committed record is deleted only once every
    // intent is rewritten, and an aborted record can also be a decider's
    // create that arrived late, after the transaction committed, finished
    // and deleted its record: both are seen only once the intent is gone.
    BT_ASSIGN_OR_RETURN(bool still, StillAt(blobs, blob, seen.properties.etag));
    if (!still) return std::optional<IntentView>();
  }
  return std::optional<IntentView>(IntentView{intent.prev_exists, intent.prev_body,
                                              intent.prev_etag, intent.prev_same,
                                              outcome == Outcome::kAborted});
}

Status FinishIntent(const ResolveContext& ctx, std::string_view blob, const EntityIntent& intent,
                    const BlobProperties& seen, bool committed, bool release,
                    bool may_use_txn_lease) {
  const bool exists = committed ? intent.next_exists : intent.prev_exists;
  const std::string& body = committed ? intent.next_body : intent.prev_body;
  // A new version is named by the intent's ETag (what the commit handed
  // out); the version before, kept (undone, or only read), by every handle
  // it had.
  const bool new_version = committed && !intent.reads_only;
  const std::string same_as = new_version ? seen.etag
                              : intent.prev_etag.empty()
                                  ? std::string()
                                  : ContinuedHandles(intent.prev_etag, intent.prev_same);
  // Under the transaction's lease while it holds the blob; the lease id is
  // its id, so whoever finishes it can present it.
  std::string lease = seen.lease_status == LeaseStatus::kLocked ? intent.txn_id : "";
  for (int tries = 0; tries < 2; ++tries) {
    Status s;
    std::string rewritten;  // the rewrite's ETag
    if (exists) {
      PutOptions o;
      o.lease_id = lease;
      o.conditions.if_match = seen.etag;
      o.metadata = {{kTxnMetadata, intent.txn_id}};
      if (!same_as.empty()) o.metadata[kSameAsMetadata] = same_as;
      AddInlineBody(o.metadata, body, ctx.inline_body_max);
      auto put = ctx.blobs.Put(blob, body, o);
      s = put.status();
      if (put.ok()) rewritten = put->etag;
    } else {
      WriteOptions o;
      o.lease_id = lease;
      o.conditions.if_match = seen.etag;
      s = ctx.blobs.Delete(blob, o);
      if (s.ok() || s.IsNotFound()) return Status::OK();  // the lease went with it
    }
    // Someone finished it first, or wrote after it was finished.
    if (s.IsConflict() || s.IsNotFound()) return Status::OK();
    // An answer lost and the retry refused (412): the rewrite landed, or
    // someone else finished the intent first; or a lease other than seen:
    // the blob may have moved on (finished by someone else, then leased by
    // its next writer). Either way the blob, read now, tells whether it
    // still holds the intent; else try again (the other way, for a lease).
    if (s.IsOutcomeUnknown() || s.IsLeaseLost() || s.IsBusy()) {
      auto now = ctx.blobs.Head(blob, {});
      if (now.status().IsNotFound() || (now.ok() && now->properties.etag != seen.etag)) {
        // The rewrite may be ours, still under the transaction's lease:
        // let go of it (refused if another holds the blob now).
        if (s.IsOutcomeUnknown() && release && !lease.empty())
          (void)ctx.blobs.ReleaseLease(blob, lease, {});
        return Status::OK();
      }
      if (s.IsOutcomeUnknown()) {  // not applied, or not known: the intent may still be there
        if (!now.ok() || tries == 1) return s;
        continue;
      }
      if (s.IsBusy() && !may_use_txn_lease) return s;  // leased since: its own to undo first
      if ((s.IsLeaseLost() && !lease.empty()) || (s.IsBusy() && lease.empty())) {
        lease = lease.empty() ? intent.txn_id : "";
        continue;
      }
    }
    BT_RETURN_IF_ERROR(s);
    if (release && !lease.empty()) (void)ctx.blobs.ReleaseLease(blob, lease, {});
    if (ctx.rewrites != nullptr && !rewritten.empty())
      ctx.rewrites->Note(std::string(blob), Rewrites::Rewrite{seen.etag, rewritten, same_as, body});
    if (ctx.finisher != nullptr && release) ctx.finisher->Settled(std::string(blob));
    return Status::OK();
  }
  return Status::Busy("entity " + std::string(blob) + " is leased by another client");
}

namespace {

// One try of SettleIntent: true when settled, false when the transaction
// was finished by someone else meanwhile (the blob is to be read again).
Result<bool> SettleIntentOnce(const ResolveContext& ctx, std::string_view blob, SettleAs as) {
  auto got = ctx.blobs.Get(blob, {});
  if (got.status().IsNotFound()) return true;
  if (!got.ok()) return got.status();
  if (PrewritingTransaction(got->properties).empty()) return true;
  BT_ASSIGN_OR_RETURN(EntityIntent intent, DecodeIntent(got->data, blob));
  if (!ctx.own_txn.empty() && intent.txn_id == ctx.own_txn) {
    // Our own, met again before our commit point (an undo of it failed).
    BT_RETURN_IF_ERROR(FinishIntent(ctx, blob, intent, got->properties, /*committed=*/false));
    return true;
  }
  TxnRecord record;
  BT_ASSIGN_OR_RETURN(Outcome outcome, OutcomeOf(ctx.blobs, intent.txn_id, &record));
  outcome = OutcomeOfIntent(outcome, record, blob, got->properties.etag);  // X1
  // Not leased yet: the writer goes first, without waiting for the
  // coordinator. It still decides through the record (C2): what it saw is
  // old by the time its undo lands, and an undo If-Match the intent lands
  // after the transaction committed if its lease on the intent was broken
  // meanwhile (TxnHolesTest.AWritersUndoOfAnIntentNotYetLeasedGoesThroughTheRecord).
  const bool writer_first =
      got->properties.lease_status != LeaseStatus::kLocked && as == SettleAs::kWriter;
  if (outcome == Outcome::kUndecided && !writer_first) {
    BT_ASSIGN_OR_RETURN(bool alive, MayBeAlive(ctx, intent));
    if (alive)
      return Status::Busy("transaction " + intent.txn_id + " is in progress on " +
                          std::string(blob));
    // "No record" tells only beside the intent still in place (R1): the
    // transaction may have committed, finished and let go of its lock since
    // the GET. Deciding then would create an aborted record for a committed
    // transaction (harmless under R1, but a record nobody needs; a writer
    // going first takes that chance to save the request).
    BT_ASSIGN_OR_RETURN(bool still, StillAt(ctx.blobs, blob, got->properties.etag));
    if (!still) return false;
  }
  bool decided_first = false;
  if (outcome == Outcome::kUndecided) {
    const TxnWrite met{std::string(blob), got->properties.etag};
    BT_ASSIGN_OR_RETURN(
        outcome, DecideAbort(ctx.blobs, intent.txn_id, writer_first ? &met : nullptr, intent.lock));
    BT_SYNC_POINT("recovery.decided");
    if (outcome == Outcome::kCommitted) {
      // Committed meanwhile: this intent only if the record names it (X1).
      BT_ASSIGN_OR_RETURN(outcome, OutcomeOf(ctx.blobs, intent.txn_id, &record));
      outcome = OutcomeOfIntent(outcome, record, blob, got->properties.etag);
    }
    if (outcome == Outcome::kUndecided) return false;  // finished by others meanwhile
    decided_first = writer_first && outcome == Outcome::kAborted;
  }
  // A writer that went first does not present the transaction's lease at
  // once: if the transaction leased the intent meanwhile, it meets the
  // record at its commit point with its intents still in place (R1: so it
  // knows nothing was committed) and undoes them itself; Busy here, and
  // the writer's next try finds the record and may present the lease.
  BT_RETURN_IF_ERROR(FinishIntent(ctx, blob, intent, got->properties,
                                  outcome == Outcome::kCommitted, /*release=*/true,
                                  /*may_use_txn_lease=*/!decided_first));
  return true;
}

}  // namespace

Status SettleIntent(const ResolveContext& ctx, std::string_view blob, const BlobProperties& seen,
                    SettleAs as) {
  if (PrewritingTransaction(seen).empty()) return Status::OK();
  for (int tries = 0; tries < 3; ++tries) {
    auto settled = SettleIntentOnce(ctx, blob, as);
    if (!settled.ok()) return settled.status();
    if (*settled) return Status::OK();
  }
  return Status::Unavailable("entity " + std::string(blob) +
                             ": its transaction was decided and finished by others three times "
                             "while this client settled it");
}

Status FinishDecided(const ResolveContext& ctx, std::string_view blob, const GetResult& seen,
                     bool committed) {
  BT_ASSIGN_OR_RETURN(EntityIntent intent, DecodeIntent(seen.data, blob));
  return FinishIntent(ctx, blob, intent, seen.properties, committed);
}

}  // namespace blobtable::internal
