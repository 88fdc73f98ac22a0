// The commit protocol (README "Transactions"). The transaction's id is also
// the id of every lease it takes, so whoever finds something it left after
// its record is gone can remove it.
//   1. record "x/<id>" created (pending) and leased, finitely and renewed:
//      the coordinator's fence;
//   2. partition lock blobs leased (finite, renewed) in sorted order, each
//      marked with the txn id; a lock naming another transaction gets it
//      resolved first; a busy one is waited for up to lock_timeout;
//   3. entities in sorted order. One held by another transaction gets it
//      resolved first (or is waited for). One to write is marked (intent),
//      then leased *infinitely* at the marked version; one to create, or
//      read as absent, is reserved, then leased infinitely; one only read is
//      leased (finite) at the version read. The leases validate every read
//      and condition; the infinite ones keep every writer out until the
//      outcome is decided, however long the coordinator stalls;
//   4. commit point: the record rewritten as committed, under its lease and
//      If-Match of the record as created (a resolver that aborted it wins);
//      an unclear answer is settled by reading back, never guessed;
//   5. writes applied under the entity leases at the marked version,
//      stamped with the txn id;
//   6. entity leases released, lock marks cleared, record deleted, locks
//      released. Each clean-up step is conditional on what this coordinator
//      wrote; if one fails, the record and lock marks stay for a resolver.
#include "txn/coordinator.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "model/blob_naming.h"
#include "remote/inline_body.h"
#include "util/macros.h"
#include "util/random.h"
#include "txn/store_core.h"
#include "txn/recovery.h"
#include "txn/sync_point.h"
#include "txn/txn_record.h"

namespace blobtable::internal {
namespace {

using Kind = Intent::Kind;
using std::chrono::milliseconds;


std::string MetaOf(const BlobProperties& p, const char* name) {
  auto it = p.metadata.find(name);
  return it == p.metadata.end() ? "" : it->second;
}

// A clean-up step that storage may not have done (the next resolver redoes it).
bool Unsettled(const Status& s) {
  return s.code() == Code::kUnavailable || s.code() == Code::kIOError ||
         s.code() == Code::kInternal || s.code() == Code::kOutcomeUnknown;
}

// An entity this coordinator has marked, reserved or leased.
struct Held {
  enum class Kind { kRead, kMarked, kReserved } kind = Kind::kRead;
  std::string etag;   // the version it holds (after its mark or reservation)
  bool leased = false;
  Metadata before;    // kMarked: the metadata without the mark
};

class Coordinator {
 public:
  explicit Coordinator(TxnBuffer& b)
      : b_(b), blobs_(*b.core->blobs), clock_(*b.core->clock), opts_(b.options),
        txn_id_(NewGuid()), record_(RecordBlobName(txn_id_)) {}

  Result<std::vector<CommittedWrite>> Run() {
    Status s = Validate();
    if (s.ok()) s = Prepare();
    if (s.ok()) s = CommitPoint();
    if (!s.ok()) {
      // Undo what is ours (every undo is conditional). An unknown commit
      // outcome is left whole to the next resolver: rolling back a record
      // that did commit would break atomicity.
      if (commit_unknown_) return s;
      Cleanup(/*committed=*/false);
      // A step before the commit point whose answer was lost (storage said
      // OutcomeUnknown) leaves the transaction uncommitted all the same:
      // its commit point was never written. Say so, or the caller would
      // settle what needs no settling.
      if (s.code() == Code::kOutcomeUnknown)
        return Status::Unavailable("transaction " + txn_id_ +
                                   ": a step before the commit point got no answer (" +
                                   s.message() + "); nothing was committed");
      return s;
    }
    return Finish();
  }

 private:
  Status Validate() {
    BT_RETURN_IF_ERROR(ValidateOptions(opts_));
    margin_ = RenewalMargin(opts_);
    return Status::OK();
  }

  // ---- Steps 1-3 ----
  Status Prepare() {
    std::set<std::string> locks;
    for (auto& [blob, intent] : b_.intents) {
      locks.insert(intent.lock);
      rec_.entities.push_back(blob);
    }
    rec_.txn_id = txn_id_;
    rec_.lease_id = txn_id_;
    rec_.locks.assign(locks.begin(), locks.end());
    PutOptions create;
    create.conditions.if_none_match = std::string(kAnyETag);
    auto created = blobs_.Put(record_, EncodeRecord(rec_), create);
    BT_RETURN_IF_ERROR(created.status());
    record_etag_ = created->etag;  // lease actions leave it unchanged
    record_created_ = true;
    BT_RETURN_IF_ERROR(blobs_.AcquireLease(record_, opts_.lease_seconds, txn_id_, {}).status());
    last_renewal_ = clock_.Steady();
    BT_SYNC_POINT("txn.record_created");

    for (const std::string& lock : rec_.locks) {
      BT_RETURN_IF_ERROR(RenewIfDue());
      BT_RETURN_IF_ERROR(AcquireLock(lock));
      BT_SYNC_POINT("txn.lock_acquired");
    }
    for (auto& [blob, intent] : b_.intents) {
      BT_RETURN_IF_ERROR(RenewIfDue());
      BT_RETURN_IF_ERROR(LeaseEntity(intent));
    }
    BT_SYNC_POINT("txn.entities_leased");
    return RenewIfDue();
  }

  ResolveContext Resolver() const {
    return {blobs_, clock_, opts_.lease_seconds, b_.core->inline_body_max};
  }

  // Renews the record's lease, then every finite lease held, when less than
  // the margin remains. The record's is renewed first, so it runs out first.
  Status RenewIfDue() {
    auto remaining = std::chrono::seconds(opts_.lease_seconds) - (clock_.Steady() - last_renewal_);
    if (remaining > margin_) return Status::OK();
    auto lost = [&](const std::string& what, const Status& s) {
      return Status::LeaseLost("transaction " + txn_id_ + " could not renew its lease on " + what +
                               ": " + s.message());
    };
    Status s = blobs_.RenewLease(record_, txn_id_, {}).status();
    if (!s.ok()) return lost(record_, s);
    for (const std::string& blob : renewed_)
      if (!(s = blobs_.RenewLease(blob, txn_id_, {}).status()).ok()) return lost(blob, s);
    last_renewal_ = clock_.Steady();
    BT_SYNC_POINT("txn.renewed");
    return Status::OK();
  }

  // Waits for the next try at something busy; LockTimeout past the deadline.
  Status WaitBusy(SteadyTime deadline, const std::string& what, int* round) {
    if (clock_.Steady() >= deadline)
      return Status::LockTimeout("transaction " + txn_id_ + ": " + what + " stayed busy for " +
                                 std::to_string(opts_.lock_timeout.count()) + " ms");
    BT_RETURN_IF_ERROR(RenewIfDue());
    b_.core->Backoff(round);
    return Status::OK();
  }

  Status AcquireLock(const std::string& lock) {
    const SteadyTime deadline = clock_.Steady() + opts_.lock_timeout;
    int round = 0;
    for (;;) {
      PutOptions create;  // the lock blob exists from its first use on
      create.conditions.if_none_match = std::string(kAnyETag);
      Status made = blobs_.Put(lock, "", create).status();
      if (!made.ok() && !made.IsConflict() && !made.IsBusy()) return made;
      auto lease = blobs_.AcquireLease(lock, opts_.lease_seconds, txn_id_, {});
      if (lease.ok()) break;
      if (!lease.status().IsBusy()) return lease.status();
      // Held: by a live transaction (wait), or a dead one (resolve it).
      Status r = ResolvePartitionLock(Resolver(), lock);
      if (!r.ok() && !r.IsBusy()) return r;
      BT_RETURN_IF_ERROR(WaitBusy(deadline, "lock " + lock, &round));
    }
    locks_held_.push_back(lock);
    renewed_.push_back(lock);
    // A mark left by a transaction that has not finished: resolve it before
    // this partition is used (the mark stays until then).
    for (;;) {
      Status r = ResolvePartitionLock(Resolver(), lock);
      if (r.ok()) break;
      if (!r.IsBusy()) return r;
      BT_RETURN_IF_ERROR(WaitBusy(deadline, "lock " + lock + " (its transaction)", &round));
    }
    WriteOptions mark;
    mark.lease_id = txn_id_;
    auto marked = blobs_.SetMetadata(lock, {{kTxnMetadata, txn_id_}}, mark);
    BT_RETURN_IF_ERROR(marked.status());
    lock_marks_[lock] = marked->etag;
    return Status::OK();
  }

  // Leases one entity at the version the transaction expects (marking it
  // first if it is to be written), or reserves it if absent; plans its write.
  Status LeaseEntity(Intent& i) {
    const SteadyTime deadline = clock_.Steady() + opts_.lock_timeout;
    int round = 0;
    std::string resolved_at;  // the version last handed to a resolver
    for (;;) {
      auto cur = blobs_.Get(i.blob, {});
      if (!cur.ok() && !cur.status().IsNotFound()) return cur.status();
      if (cur.ok() && !MarkingTransaction(cur->properties).empty()) {
        // Another transaction's mark or reservation: it decides first.
        if (cur->properties.etag == resolved_at)
          BT_RETURN_IF_ERROR(WaitBusy(deadline, "entity " + i.blob + " (held by a transaction)",
                                      &round));
        resolved_at = cur->properties.etag;
        Status r = ResolveBlob(Resolver(), i.blob, cur->properties);
        if (!r.ok() && !r.IsBusy()) return r;
        continue;
      }
      const bool exists = cur.ok();
      const std::string etag = exists ? cur->properties.etag : "";
      BT_RETURN_IF_ERROR(Expectation(i, exists, etag));
      Status s = exists && !i.writes() ? LeaseRead(i.blob, etag)
                                       : MarkOrReserve(i, exists ? &cur->properties : nullptr);
      if (s.IsConflict() || s.IsNotFound()) continue;  // raced: look again
      if (s.IsBusy()) {
        // Another client's lease, or a finished transaction's never released.
        if (exists) (void)ResolveBlob(Resolver(), i.blob, cur->properties);
        BT_RETURN_IF_ERROR(WaitBusy(deadline, "entity " + i.blob, &round));
        continue;
      }
      BT_RETURN_IF_ERROR(s);
      s = HoldUntilDecided(i.blob, deadline, &round);
      if (s.IsConflict()) continue;
      BT_RETURN_IF_ERROR(s);
      return PlanWrite(i, exists, exists ? &cur->data : nullptr, held_[i.blob].etag);
    }
  }

  // An entity only read: a finite lease at the version read.
  Status LeaseRead(const std::string& blob, const std::string& etag) {
    AccessConditions at;
    at.if_match = etag;
    BT_RETURN_IF_ERROR(blobs_.AcquireLease(blob, opts_.lease_seconds, txn_id_, at).status());
    held_[blob] = Held{Held::Kind::kRead, etag, true, {}};
    renewed_.push_back(blob);
    return Status::OK();
  }

  // An entity to write gets the intent mark; an absent one a reservation.
  // Neither is leased yet (a lease needs a blob, and a mark must be in place
  // before the lease, so that a lease is never left without one).
  Status MarkOrReserve(const Intent& i, const BlobProperties* current) {
    if (current != nullptr) {
      Metadata marked = current->metadata;
      marked[kIntentMetadata] = txn_id_;
      WriteOptions o;
      o.conditions.if_match = current->etag;
      auto mark = blobs_.SetMetadata(i.blob, marked, o);
      BT_RETURN_IF_ERROR(mark.status());
      held_[i.blob] = Held{Held::Kind::kMarked, mark->etag, false, current->metadata};
    } else {
      PutOptions reserve;
      reserve.metadata = {{kReservationMetadata, txn_id_}};
      reserve.conditions.if_none_match = std::string(kAnyETag);
      auto put = blobs_.Put(i.blob, "", reserve);
      if (put.status().code() == Code::kConflict) return Status::Conflict("created meanwhile");
      BT_RETURN_IF_ERROR(put.status());
      held_[i.blob] = Held{Held::Kind::kReserved, put->etag, false, {}};
    }
    BT_SYNC_POINT("txn.entity_marked");
    return Status::OK();
  }

  // Leases a marked or reserved entity with no expiry: it stays out of
  // every writer's reach until a coordinator or resolver decides.
  // Conflict if it changed since it was marked (look again).
  Status HoldUntilDecided(const std::string& blob, SteadyTime deadline, int* round) {
    Held& h = held_[blob];
    if (h.kind == Held::Kind::kRead) return Status::OK();
    for (;;) {
      AccessConditions at;
      at.if_match = h.etag;
      auto lease = blobs_.AcquireLease(blob, kInfiniteLease, txn_id_, at);
      if (lease.ok()) {
        h.leased = true;
        return Status::OK();
      }
      if (lease.status().IsConflict() || lease.status().IsNotFound()) {
        held_.erase(blob);  // overwritten between the two requests: not ours any more
        return Status::Conflict("changed");
      }
      if (!lease.status().IsBusy()) return lease.status();
      BT_RETURN_IF_ERROR(WaitBusy(deadline, "entity " + blob, round));
    }
  }

  Status PlanWrite(Intent& i, bool exists, const std::string* current, const std::string& seen) {
    if (!i.writes()) return Status::OK();
    TxnWrite w;
    w.blob = i.blob;
    w.seen_etag = seen;
    if (i.kind == Kind::kDelete) {
      w.op = TxnWrite::kDelete;
    } else {
      BT_ASSIGN_OR_RETURN(w.body, NewBody(i, exists ? current : nullptr, clock_.Now()));
    }
    writes_.push_back(std::move(w));
    return Status::OK();
  }

  // ---- Step 4 ----
  Status CommitPoint() {
    TxnRecord committed = rec_;
    committed.state = TxnState::kCommitted;
    committed.writes = writes_;
    PutOptions o;
    o.lease_id = txn_id_;
    o.conditions.if_match = record_etag_;
    auto put = blobs_.Put(record_, EncodeRecord(committed), o);
    if (!put.ok()) return Settle(put.status());
    record_etag_ = put->etag;
    BT_SYNC_POINT("txn.committed");
    return Status::OK();
  }

  // The commit-point write failed. Its answer may be wrong or lost (applied,
  // then retried by a transport), so it proves nothing: look.
  Status Settle(const Status& failure) {
    auto now = blobs_.Get(record_, {});
    if (now.ok()) {
      auto rec = DecodeRecord(now->data, record_);
      if (rec.ok() && rec->state == TxnState::kCommitted) {
        record_etag_ = now->properties.etag;
        BT_SYNC_POINT("txn.committed");
        return Status::OK();
      }
      if (rec.ok() && (rec->state == TxnState::kAborted || now->properties.etag == record_etag_))
        return NotCommitted(failure);
    } else if (now.status().IsNotFound()) {
      // A successor resolved it and removed the record: its entities tell.
      std::optional<bool> committed = CommittedPerEntities();
      if (committed && *committed) {
        finished_by_successor_ = true;
        BT_SYNC_POINT("txn.committed");
        return Status::OK();
      }
      if (committed) return NotCommitted(failure);
    }
    commit_unknown_ = true;
    return Status::OutcomeUnknown(
        "transaction " + txn_id_ + ": its commit point was sent but the answer was lost (" +
        failure.ToString() + "), and reading back could not tell whether it took effect. "
        "Read the entities it writes (a read settles it) or run `blobtable recover`, then decide");
  }

  Status NotCommitted(const Status& failure) {
    if (failure.code() == Code::kLeaseLost || failure.IsBusy() || failure.IsConflict())
      return Status::LeaseLost("transaction " + txn_id_ +
                               " lost its record before the commit point (it stalled past its "
                               "lease and was taken over): nothing was committed");
    return failure.WithContext("transaction " + txn_id_ + " (nothing was committed)");
  }

  // With the record gone: true if a write was applied (stamped with this
  // id), false if one is still as marked (a committed record is removed only
  // after every write is applied or found overwritten), nullopt if unclear.
  std::optional<bool> CommittedPerEntities() {
    for (const TxnWrite& w : writes_) {
      auto head = blobs_.Head(w.blob, {});
      if (!head.ok()) continue;
      if (MetaOf(head->properties, kTxnMetadata) == txn_id_) return true;
      if (head->properties.etag == w.seen_etag &&
          MarkingTransaction(head->properties) == txn_id_)
        return false;
    }
    return std::nullopt;
  }

  // ---- Steps 5 and 6 ----
  Result<std::vector<CommittedWrite>> Finish() {
    bool all = !finished_by_successor_;
    for (const TxnWrite& w : writes_) {
      if (!all) break;
      Status s = Apply(w);
      if (s.ok()) s = RenewIfDue();
      // Committed all the same: whoever touches the entity next applies the
      // rest (or a successor that took over already did).
      if (!s.ok()) all = false;
      else BT_SYNC_POINT("txn.applied_one");
    }
    if (all) {
      BT_SYNC_POINT("txn.applied");
      Cleanup(/*committed=*/true);
    }
    std::vector<const Intent*> ordered;
    for (const auto& [blob, intent] : b_.intents)
      if (intent.writes()) ordered.push_back(&intent);
    std::sort(ordered.begin(), ordered.end(),
              [](const Intent* a, const Intent* b) { return a->order < b->order; });
    std::vector<CommittedWrite> out;
    for (const Intent* i : ordered) {
      auto it = applied_.find(i->blob);
      bool applied = it != applied_.end();
      out.push_back({i->table, i->pk, i->rk, applied ? it->second : "", applied});
    }
    return out;
  }

  // Under the entity's lease and at the version marked: a fenced
  // coordinator writes nothing, whatever the service does with lease ids.
  Status Apply(const TxnWrite& w) {
    if (w.op == TxnWrite::kDelete) {
      WriteOptions o;
      o.lease_id = txn_id_;
      o.conditions.if_match = w.seen_etag;
      BT_RETURN_IF_ERROR(blobs_.Delete(w.blob, o));
      applied_[w.blob] = "";
      return Status::OK();
    }
    PutOptions o;
    o.lease_id = txn_id_;
    o.conditions.if_match = w.seen_etag;
    o.metadata = {{kTxnMetadata, txn_id_}};
    AddInlineBody(o.metadata, w.body, b_.core->inline_body_max);
    auto put = blobs_.Put(w.blob, w.body, o);
    BT_RETURN_IF_ERROR(put.status());
    applied_[w.blob] = put->etag;
    return Status::OK();
  }

  // Lets go of everything: after a commit, the leases on what it applied;
  // before one, its marks and reservations too. If a step may not have been
  // done, the record and lock marks stay for a resolver to finish the job.
  void Cleanup(bool committed) {
    bool settled = true;
    auto note = [&](const Status& s) { settled = settled && !Unsettled(s); };
    for (const auto& [blob, h] : held_) {
      WriteOptions o;
      if (h.leased) o.lease_id = txn_id_;
      o.conditions.if_match = h.etag;
      auto done = applied_.find(blob);
      if (committed && done != applied_.end()) {
        if (!done->second.empty()) note(blobs_.ReleaseLease(blob, txn_id_, {}).status());
        continue;  // (a delete took its lease with it)
      }
      if (h.kind == Held::Kind::kReserved) {
        note(blobs_.Delete(blob, o));
        continue;
      }
      if (h.kind == Held::Kind::kMarked) note(blobs_.SetMetadata(blob, h.before, o).status());
      if (h.leased) note(blobs_.ReleaseLease(blob, txn_id_, {}).status());
    }
    BT_SYNC_POINT("txn.entities_released");
    if (settled) {
      // Only marks this coordinator wrote, at the version it wrote them: a
      // lock another transaction marked meanwhile keeps its mark.
      for (const auto& [lock, etag] : lock_marks_) {
        WriteOptions o;
        o.lease_id = txn_id_;
        o.conditions.if_match = etag;
        note(blobs_.SetMetadata(lock, {}, o).status());
      }
    }
    BT_SYNC_POINT("txn.locks_cleared");
    if (settled && record_created_) {
      WriteOptions o;
      o.lease_id = txn_id_;
      o.conditions.if_match = record_etag_;  // as created, or as committed
      (void)blobs_.Delete(record_, o);
    }
    BT_SYNC_POINT("txn.record_deleted");
    for (const std::string& lock : locks_held_) (void)blobs_.ReleaseLease(lock, txn_id_, {});
  }

  TxnBuffer& b_;
  BlobStore& blobs_;
  Clock& clock_;
  const TransactionOptions opts_;
  const std::string txn_id_;  // also the id of every lease it takes
  const std::string record_;
  milliseconds margin_{0};
  std::string record_etag_;  // the record as created, then as committed
  TxnRecord rec_;
  bool record_created_ = false;
  bool commit_unknown_ = false;         // the commit point's outcome is unknown
  bool finished_by_successor_ = false;  // committed, resolved and removed by another
  SteadyTime last_renewal_;  // monotonic: a wall-clock step must not skip a renewal
  std::vector<std::string> locks_held_;
  std::map<std::string, std::string> lock_marks_;  // lock -> its ETag after our mark
  std::vector<std::string> renewed_;               // finite leases besides the record's
  std::map<std::string, Held> held_;               // entities, by blob
  std::vector<TxnWrite> writes_;
  std::map<std::string, std::string> applied_;  // blob -> new ETag ("" for a delete)
};

}  // namespace

Result<std::vector<CommittedWrite>> CommitBuffer(TxnBuffer& buffer) {
  Coordinator c(buffer);
  return c.Run();
}

}  // namespace blobtable::internal
