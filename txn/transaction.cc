// Transaction: buffering, and the commit protocol (README "Transactions"):
//   1. record "x/<id>" created (pending) and leased: the coordinator's fence;
//   2. partition lock blobs leased in sorted order (deadlock-free), each
//      marked with the txn id; a lock naming a dead transaction gets it
//      resolved first; a busy one is waited for up to lock_timeout;
//   3. every entity involved leased at the ETag the transaction expects
//      (which validates it); an entity to create gets a reservation blob;
//   4. commit point: the record rewritten as committed, with every write,
//      under the record's lease (a fenced coordinator cannot do this);
//   5. writes applied under the entity leases, stamped with the txn id;
//   6. entity leases released, lock marks cleared, record deleted, locks
//      released.
// Leases are held only inside Commit() and renewed between steps.
#include "blobtable/txn.h"

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "blobtable/store.h"
#include "kv/blob_naming.h"
#include "kv/entity_codec.h"
#include "kv/macros.h"
#include "kv/random.h"
#include "kv/store_core.h"
#include "txn/recovery.h"
#include "txn/sync_point.h"
#include "txn/txn_record.h"

namespace blobtable {
namespace internal {

struct Intent {
  std::string table, pk, rk, blob, lock;
  size_t order = 0;
  // What a Get inside the transaction saw.
  bool read = false;
  bool read_found = false;
  std::string read_etag;
  bool reads_disagree = false;  // read twice and saw two versions
  // The write (or check).
  enum class Kind { kNone, kPut, kMerge, kDelete, kCheck } kind = Kind::kNone;
  enum class Expect { kAny, kExists, kAbsent, kETag } expect = Expect::kAny;
  std::string etag;
  Entity entity;
};

struct TxnBuffer {
  std::shared_ptr<const StoreCore> core;
  TransactionOptions options;
  std::map<std::string, Intent> intents;  // by entity blob name: sorted
  size_t next_order = 0;
  bool finished = false;
};

}  // namespace internal

namespace {

using internal::Intent;
using Kind = Intent::Kind;
using Expect = Intent::Expect;

std::string Describe(const Intent& i) {
  return "table " + i.table + ", entity (PartitionKey '" + i.pk.substr(0, 64) + "', RowKey '" +
         i.rk.substr(0, 64) + "')";
}

std::string MetaOf(const BlobProperties& p, const char* name) {
  auto it = p.metadata.find(name);
  return it == p.metadata.end() ? "" : it->second;
}

// One Commit() run.
class Coordinator {
 public:
  Coordinator(internal::TxnBuffer& b)
      : b_(b), blobs_(*b.core->blobs), clock_(*b.core->clock), opts_(b.options),
        txn_id_(NewGuid()), lease_id_(NewGuid()), record_(RecordBlobName(txn_id_)) {}

  Result<std::vector<CommittedWrite>> Run() {
    Status s = Prepare();
    if (!s.ok()) {
      // Undo what is still ours (every undo is conditional). An unknown
      // commit outcome is left whole to the next resolver: rolling back a
      // record that did commit would break atomicity.
      if (!commit_unknown_) Rollback();
      return s;
    }
    return Finish();
  }

 private:
  // ---- Steps 1-3, then the commit point ----
  Status Prepare() {
    if (opts_.lease_seconds < 15 || opts_.lease_seconds > 60)
      return Status::InvalidArgument("TransactionOptions::lease_seconds must be 15..60");
    std::set<std::string> locks;
    for (auto& [blob, intent] : b_.intents) {
      locks.insert(intent.lock);
      rec_.entities.push_back(blob);
    }
    rec_.txn_id = txn_id_;
    rec_.lease_id = lease_id_;
    rec_.locks.assign(locks.begin(), locks.end());
    PutOptions create;
    create.conditions.if_none_match = std::string(kAnyETag);
    auto created = blobs_.Put(record_, EncodeRecord(rec_), create);
    BT_RETURN_IF_ERROR(created.status());
    record_etag_ = created->etag;  // lease actions leave it unchanged
    record_created_ = true;
    BT_RETURN_IF_ERROR(blobs_.AcquireLease(record_, opts_.lease_seconds, lease_id_, {}).status());
    last_renewal_ = clock_.Now();
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
    BT_RETURN_IF_ERROR(RenewIfDue());

    // Commit point: under the record's lease, and only over the record as this
    // coordinator made it (a resolver that aborted or deleted it wins; the
    // ETag check does not depend on how a service treats a lease id on a
    // deleted blob).
    TxnRecord committed = rec_;
    committed.state = TxnState::kCommitted;
    committed.writes = writes_;
    PutOptions o;
    o.lease_id = lease_id_;
    o.conditions.if_match = record_etag_;
    auto put = blobs_.Put(record_, EncodeRecord(committed), o);
    if (!put.ok()) {
      if (put.status().code() == Code::kLeaseLost || put.status().IsBusy() ||
          put.status().IsConflict())
        return Status::LeaseLost("transaction " + txn_id_ +
                                 " lost its record lease before the commit point (it was taken "
                                 "over): nothing was committed");
      // No clear answer (the request may have been applied): look.
      auto now = blobs_.Get(record_, {});
      if (now.ok()) {
        auto rec = DecodeRecord(now->data, record_);
        if (rec.ok() && rec->state == TxnState::kCommitted) {
          BT_SYNC_POINT("txn.committed");
          return Status::OK();  // it did commit
        }
        if (rec.ok() && now->properties.etag == record_etag_) return put.status();  // it did not
      }
      commit_unknown_ = true;
      return Status::FromStorage(put.status().code(), put.status().http_status(),
                                 put.status().storage_code(),
                                 "transaction " + txn_id_ + ": the outcome of its commit is "
                                 "unknown (" + put.status().message() + "); the next party to "
                                 "touch its partitions (or `blobtable recover`) settles it");
    }
    BT_SYNC_POINT("txn.committed");
    return Status::OK();
  }

  Status RenewIfDue() {
    auto remaining = std::chrono::seconds(opts_.lease_seconds) - (clock_.Now() - last_renewal_);
    if (remaining > opts_.renewal_margin) return Status::OK();
    auto lost = [&](const std::string& what, const Status& s) {
      return Status::LeaseLost("transaction " + txn_id_ + " could not renew its lease on " + what +
                               ": " + s.message());
    };
    Status s = blobs_.RenewLease(record_, lease_id_, {}).status();
    if (!s.ok()) return lost(record_, s);
    for (const std::string& blob : held_)
      if (!(s = blobs_.RenewLease(blob, lease_id_, {}).status()).ok()) return lost(blob, s);
    last_renewal_ = clock_.Now();
    BT_SYNC_POINT("txn.renewed");
    return Status::OK();
  }

  // Waits for the next try at something busy; LockTimeout past the deadline.
  Status Wait(TimePoint deadline, const std::string& what, int* round) {
    if (clock_.Now() >= deadline)
      return Status::LockTimeout("transaction " + txn_id_ + ": " + what + " stayed busy for " +
                                 std::to_string(opts_.lock_timeout.count()) + " ms");
    BT_RETURN_IF_ERROR(RenewIfDue());
    b_.core->Backoff(round);
    return Status::OK();
  }

  Status AcquireLock(const std::string& lock) {
    TimePoint deadline = clock_.Now() + opts_.lock_timeout;
    int round = 0;
    for (;;) {
      PutOptions create;  // the lock blob exists from its first use on
      create.conditions.if_none_match = std::string(kAnyETag);
      Status made = blobs_.Put(lock, "", create).status();
      if (!made.ok() && !made.IsConflict() && !made.IsBusy()) return made;
      auto lease = blobs_.AcquireLease(lock, opts_.lease_seconds, lease_id_, {});
      if (lease.ok()) {
        held_.push_back(lock);
        // A mark left by a transaction that never cleaned up: resolve it
        // before this partition is used.
        for (;;) {
          Status r = ResolvePartitionLock(blobs_, lock, opts_.lease_seconds);
          if (r.ok()) break;
          if (!r.IsBusy()) return r;
          BT_RETURN_IF_ERROR(Wait(deadline, "lock " + lock, &round));
        }
        WriteOptions mark;
        mark.lease_id = lease_id_;
        return blobs_.SetMetadata(lock, {{kTxnMetadata, txn_id_}}, mark).status();
      }
      if (!lease.status().IsBusy()) return lease.status();
      // Held: by a live transaction (wait), or a dead one (resolve it).
      Status r = ResolvePartitionLock(blobs_, lock, opts_.lease_seconds);
      if (!r.ok() && !r.IsBusy()) return r;
      BT_RETURN_IF_ERROR(Wait(deadline, "lock " + lock, &round));
    }
  }

  static Status Expectation(const Intent& i, bool exists, const std::string& etag) {
    if (i.reads_disagree)
      return Status::Conflict(Describe(i) + ": read twice in the transaction, two versions seen");
    if (i.read && (i.read_found != exists || (exists && etag != i.read_etag)))
      return Status::Conflict(Describe(i) + ": changed since the transaction read it");
    switch (i.expect) {
      case Expect::kAny: return Status::OK();
      case Expect::kAbsent:
        if (exists) return Status::Conflict(Describe(i) + ": already exists");
        return Status::OK();
      case Expect::kExists:
        if (!exists) return Status::NotFound(Describe(i) + ": not found");
        return Status::OK();
      case Expect::kETag:
        if (!exists) return Status::NotFound(Describe(i) + ": not found");
        if (etag != i.etag)
          return Status::Conflict(Describe(i) + ": ETag " + i.etag + " no longer matches (now " +
                                  etag + ")");
        return Status::OK();
    }
    return Status::Internal("unknown expectation");
  }

  // Leases one entity at the version the transaction expects, or reserves
  // it if it is to be created, and computes its write.
  Status LeaseEntity(Intent& i) {
    TimePoint deadline = clock_.Now() + opts_.lock_timeout;
    int round = 0;
    for (;;) {
      auto cur = blobs_.Get(i.blob, {});
      bool exists = cur.ok();
      if (!exists && !cur.status().IsNotFound()) return cur.status();
      if (exists && !MetaOf(cur->properties, kReservationMetadata).empty()) {
        // A reservation left by a transaction resolved meanwhile, or a
        // leftover: absent for us. Take it over.
        exists = false;
      }
      const std::string etag = exists ? cur->properties.etag : "";
      BT_RETURN_IF_ERROR(Expectation(i, exists, etag));
      std::string seen;
      if (exists) {
        AccessConditions at;
        at.if_match = etag;
        auto lease = blobs_.AcquireLease(i.blob, opts_.lease_seconds, lease_id_, at);
        if (lease.status().IsConflict() || lease.status().IsNotFound()) continue;  // raced: look again
        if (lease.status().IsBusy()) {
          BT_RETURN_IF_ERROR(Wait(deadline, "entity " + i.blob, &round));
          continue;
        }
        if (!lease.ok()) return lease.status();
        seen = etag;
        if (i.kind == Kind::kPut || i.kind == Kind::kMerge || i.kind == Kind::kDelete) {
          // Mark the intent, so that whoever reads this entity after a crash
          // finishes the transaction first.
          Metadata marked = cur->properties.metadata;
          marked[kIntentMetadata] = txn_id_;
          WriteOptions o;
          o.lease_id = lease_id_;
          auto mark = blobs_.SetMetadata(i.blob, marked, o);
          if (!mark.ok()) return mark.status();
          seen = mark->etag;
          marked_[i.blob] = cur->properties.metadata;
        }
      } else {
        bool needs_reservation = i.kind != Kind::kDelete;
        if (!needs_reservation) return Status::OK();  // unreachable: Expect kExists/kETag
        PutOptions reserve;
        reserve.metadata = {{kReservationMetadata, txn_id_}};
        if (cur.ok()) {
          // Replace a leftover reservation: it may still carry an old lease.
          auto lease = blobs_.AcquireLease(i.blob, opts_.lease_seconds, lease_id_, {});
          if (!lease.ok()) {
            if (lease.status().IsBusy()) {
              BT_RETURN_IF_ERROR(Wait(deadline, "entity " + i.blob, &round));
              continue;
            }
            return lease.status();
          }
          reserve.lease_id = lease_id_;
          reserve.conditions.if_match = cur->properties.etag;
        } else {
          reserve.conditions.if_none_match = std::string(kAnyETag);
        }
        auto put = blobs_.Put(i.blob, "", reserve);
        if (put.status().IsConflict() || put.status().IsBusy()) continue;  // created meanwhile
        if (!put.ok()) return put.status();
        if (!cur.ok()) {
          AccessConditions at;
          at.if_match = put->etag;
          auto lease = blobs_.AcquireLease(i.blob, opts_.lease_seconds, lease_id_, at);
          if (!lease.ok()) return lease.status();
        }
        seen = put->etag;
        reserved_.insert(i.blob);
      }
      held_.push_back(i.blob);
      seen_[i.blob] = seen;
      return PlanWrite(i, exists, exists ? &cur->data : nullptr, seen);
    }
  }

  Status PlanWrite(Intent& i, bool exists, const std::string* current, const std::string& seen) {
    if (i.kind == Kind::kNone || i.kind == Kind::kCheck) return Status::OK();
    TxnWrite w;
    w.blob = i.blob;
    w.seen_etag = seen;
    if (i.kind == Kind::kDelete) {
      w.op = TxnWrite::kDelete;
    } else {
      Entity stored = i.entity;
      if (i.kind == Kind::kMerge && exists) {
        BT_ASSIGN_OR_RETURN(stored, DecodeEntity(*current, i.blob));
        for (const auto& [name, value] : i.entity.properties()) stored.Set(name, value);
        Status valid = ValidateEntity(stored);
        if (!valid.ok()) return valid.WithContext(Describe(i) + ": after merging");
      }
      stored.set_timestamp(std::chrono::time_point_cast<Ticks>(clock_.Now()));
      BT_ASSIGN_OR_RETURN(w.body, EncodeEntity(stored));
    }
    writes_.push_back(std::move(w));
    written_.insert(i.blob);
    return Status::OK();
  }

  // ---- After the commit point ----
  Result<std::vector<CommittedWrite>> Finish() {
    std::map<std::string, std::string> etags;
    Status failure;
    for (const TxnWrite& w : writes_) {
      Status s;
      // Under the entity's lease and at the ETag it had when leased: a
      // fenced coordinator writes nothing, whatever the service does with
      // lease ids.
      if (w.op == TxnWrite::kDelete) {
        WriteOptions o;
        o.lease_id = lease_id_;
        o.conditions.if_match = w.seen_etag;
        s = blobs_.Delete(w.blob, o);
        etags[w.blob] = "";
      } else {
        PutOptions o;
        o.lease_id = lease_id_;
        o.conditions.if_match = w.seen_etag;
        o.metadata = {{kTxnMetadata, txn_id_}};
        auto put = blobs_.Put(w.blob, w.body, o);
        s = put.status();
        if (put.ok()) etags[w.blob] = put->etag;
      }
      if (s.ok()) s = RenewIfDue();
      if (!s.ok()) {
        failure = s;
        break;
      }
      BT_SYNC_POINT("txn.applied_one");
    }
    if (!failure.ok())
      return Status::FromStorage(failure.code(), failure.http_status(), failure.storage_code(),
                                 "transaction " + txn_id_ +
                                     " is committed but applying it failed (" + failure.message() +
                                     "); the next writer, transactional reader or `blobtable "
                                     "recover` on these partitions completes it");
    BT_SYNC_POINT("txn.applied");
    Cleanup(/*delete_reservations=*/true);
    std::vector<CommittedWrite> out;
    std::vector<const Intent*> ordered;
    for (const auto& [blob, intent] : b_.intents)
      if (written_.count(blob)) ordered.push_back(&intent);
    std::sort(ordered.begin(), ordered.end(),
              [](const Intent* a, const Intent* b) { return a->order < b->order; });
    for (const Intent* i : ordered) out.push_back({i->table, i->pk, i->rk, etags[i->blob]});
    return out;
  }

  // Releases everything (before the commit point: undoing reservations too).
  void Cleanup(bool delete_reservations) {
    for (const std::string& blob : held_) {
      bool is_lock = std::find(rec_.locks.begin(), rec_.locks.end(), blob) != rec_.locks.end();
      if (is_lock) continue;
      // Undo only what is still as this coordinator left it (If-Match):
      // after a takeover, a resolver or a later writer may have moved on.
      WriteOptions o;
      o.lease_id = lease_id_;
      o.conditions.if_match = seen_[blob];
      if (delete_reservations && reserved_.count(blob) && !written_applied(blob)) {
        (void)blobs_.Delete(blob, o);
      } else if (!applied_ && marked_.count(blob)) {
        (void)blobs_.SetMetadata(blob, marked_[blob], o);  // drop the intent mark
        (void)blobs_.ReleaseLease(blob, lease_id_, {});
      } else {
        (void)blobs_.ReleaseLease(blob, lease_id_, {});
      }
    }
    BT_SYNC_POINT("txn.entities_released");
    for (const std::string& lock : rec_.locks) {
      if (std::find(held_.begin(), held_.end(), lock) == held_.end()) continue;
      WriteOptions o;
      o.lease_id = lease_id_;
      (void)blobs_.SetMetadata(lock, {}, o);
    }
    BT_SYNC_POINT("txn.locks_cleared");
    if (record_created_) {
      WriteOptions o;
      o.lease_id = lease_id_;
      // Before the commit point, only the record as created (a resolver's
      // "aborted" rewrite is its to remove); after it, the committed one.
      if (!applied_) o.conditions.if_match = record_etag_;
      (void)blobs_.Delete(record_, o);
    }
    BT_SYNC_POINT("txn.record_deleted");
    for (const std::string& lock : rec_.locks)
      if (std::find(held_.begin(), held_.end(), lock) != held_.end())
        (void)blobs_.ReleaseLease(lock, lease_id_, {});
  }
  bool written_applied(const std::string& blob) const { return applied_ && written_.count(blob); }

  void Rollback() {
    applied_ = false;
    Cleanup(/*delete_reservations=*/true);
  }

  internal::TxnBuffer& b_;
  BlobStore& blobs_;
  Clock& clock_;
  const TransactionOptions& opts_;
  const std::string txn_id_, lease_id_, record_;
  std::string record_etag_;
  TxnRecord rec_;
  bool record_created_ = false;
  bool applied_ = true;  // Cleanup after Finish: reservations were overwritten
  TimePoint last_renewal_;
  std::vector<std::string> held_;  // leased blobs (locks and entities), in order taken
  std::set<std::string> reserved_;
  std::map<std::string, Metadata> marked_;  // intent-marked entities: their metadata before
  std::map<std::string, std::string> seen_;  // leased entities: the ETag after lease/mark
  bool commit_unknown_ = false;              // the commit-point write's outcome is unknown
  std::set<std::string> written_;
  std::vector<TxnWrite> writes_;
};

}  // namespace

Transaction::Transaction(std::shared_ptr<const internal::StoreCore> core, TransactionOptions options)
    : buffer_(std::make_unique<internal::TxnBuffer>()) {
  buffer_->core = std::move(core);
  buffer_->options = options;
}

Transaction::~Transaction() = default;

namespace {

Result<Intent*> IntentFor(internal::TxnBuffer& b, const Table& table, std::string_view pk,
                          std::string_view rk) {
  if (b.finished) return Status::InvalidArgument("the transaction has already committed or aborted");
  BT_ASSIGN_OR_RETURN(std::string blob, table.EntityBlobName(pk, rk));
  BT_ASSIGN_OR_RETURN(std::string lock, table.LockBlobName(pk));
  Intent& i = b.intents[blob];
  if (i.blob.empty()) {
    i.table = table.name();
    i.pk = std::string(pk);
    i.rk = std::string(rk);
    i.blob = blob;
    i.lock = lock;
  }
  return &i;
}

Status AddWrite(internal::TxnBuffer& b, const Table& table, std::string_view pk,
                std::string_view rk, Kind kind, Expect expect, std::string etag,
                const Entity* entity) {
  if (entity != nullptr) {
    Status valid = ValidateEntity(*entity);
    if (!valid.ok()) return valid;
  }
  BT_ASSIGN_OR_RETURN(Intent * i, IntentFor(b, table, pk, rk));
  if (i->kind != Kind::kNone)
    return Status::InvalidArgument(Describe(*i) + ": written twice in one transaction");
  i->kind = kind;
  i->expect = expect;
  i->etag = std::move(etag);
  if (entity != nullptr) i->entity = *entity;
  i->order = b.next_order++;
  return Status::OK();
}

Expect ExpectFor(std::string_view if_match) {
  return if_match == kAnyETag ? Expect::kExists : Expect::kETag;
}

}  // namespace

Result<Entity> Transaction::Get(const Table& table, std::string_view pk, std::string_view rk) {
  BT_ASSIGN_OR_RETURN(Intent * i, IntentFor(*buffer_, table, pk, rk));
  auto e = table.Get(pk, rk);
  if (!e.ok() && !e.status().IsNotFound()) return e.status();
  // Every read must still hold at commit: a second read that sees another
  // version than the first dooms the transaction (its first decision was
  // based on a version that is gone).
  std::string etag = e.ok() ? e->etag() : "";
  if (i->read && (i->read_found != e.ok() || i->read_etag != etag)) i->reads_disagree = true;
  if (!i->read) {
    i->read = true;
    i->read_found = e.ok();
    i->read_etag = etag;
  }
  return e;
}

Status Transaction::Insert(const Table& t, const Entity& e) {
  return AddWrite(*buffer_, t, e.partition_key(), e.row_key(), Kind::kPut, Expect::kAbsent, "", &e);
}
Status Transaction::Replace(const Table& t, const Entity& e, std::string_view if_match) {
  if (if_match.empty()) return Status::InvalidArgument("Replace needs an ETag or \"*\"");
  return AddWrite(*buffer_, t, e.partition_key(), e.row_key(), Kind::kPut, ExpectFor(if_match),
                  std::string(if_match), &e);
}
Status Transaction::Merge(const Table& t, const Entity& e, std::string_view if_match) {
  if (if_match.empty()) return Status::InvalidArgument("Merge needs an ETag or \"*\"");
  return AddWrite(*buffer_, t, e.partition_key(), e.row_key(), Kind::kMerge, ExpectFor(if_match),
                  std::string(if_match), &e);
}
Status Transaction::Upsert(const Table& t, const Entity& e) {
  return AddWrite(*buffer_, t, e.partition_key(), e.row_key(), Kind::kPut, Expect::kAny, "", &e);
}
Status Transaction::UpsertMerge(const Table& t, const Entity& e) {
  return AddWrite(*buffer_, t, e.partition_key(), e.row_key(), Kind::kMerge, Expect::kAny, "", &e);
}
Status Transaction::Delete(const Table& t, std::string_view pk, std::string_view rk,
                           std::string_view if_match) {
  if (if_match.empty()) return Status::InvalidArgument("Delete needs an ETag or \"*\"");
  return AddWrite(*buffer_, t, pk, rk, Kind::kDelete, ExpectFor(if_match), std::string(if_match),
                  nullptr);
}
Status Transaction::Check(const Table& t, std::string_view pk, std::string_view rk,
                          std::string_view etag) {
  return AddWrite(*buffer_, t, pk, rk, Kind::kCheck, etag.empty() ? Expect::kAbsent : Expect::kETag,
                  std::string(etag), nullptr);
}

Result<std::vector<CommittedWrite>> Transaction::Commit() {
  if (buffer_->finished)
    return Status::InvalidArgument("the transaction has already committed or aborted");
  buffer_->finished = true;
  if (buffer_->intents.empty()) return std::vector<CommittedWrite>{};
  Coordinator c(*buffer_);
  return c.Run();
}

void Transaction::Abort() {
  buffer_->finished = true;
  buffer_->intents.clear();
}

}  // namespace blobtable
