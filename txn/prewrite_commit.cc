// SPDX-License-Identifier: Apache-2.0
// The protocol-2 coordinator (prewrite_commit.h). Every lease it takes has
// the transaction's id as its lease id, so whoever finishes or undoes one of
// its intents can present it.
#include "txn/prewrite_commit.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include "model/entity_codec.h"
#include "txn/finisher.h"
#include "txn/intent.h"
#include "txn/index_upkeep.h"
#include "txn/intent_resolver.h"
#include "txn/txn_context.h"
#include "testing/sync_point.h"
#include "txn/txn_record.h"
#include "util/macros.h"
#include "util/parallel.h"
#include "util/random.h"
#include "util/stored_format.h"

namespace blobtable::internal {
namespace {

using Kind = Intent::Kind;
using std::chrono::milliseconds;

// Whether a lock's lease may still be held after its release answered
// `released`: gone or never ours tells it is not; anything else does not
// tell (LockStripes keeps such a stripe until the lease runs out).
bool LeaseMayBeLeft(const Status& released) {
  return !released.ok() && !released.IsLeaseLost() && !released.IsNotFound();
}

// One lease target of a commit: a partition lock stripe, or an entity.
struct Target {
  std::string blob;
  Intent* intent = nullptr;       // null for a lock
  LockStripes::Claim stripe;      // a lock: which of the partition's lock blobs
  bool lease_maybe_left = false;  // a lock: a lease or release got no clear answer
  // An entity: its intent's put got no clear answer and another client's
  // write is on the blob now (Conflict, to answer instead of Unavailable).
  Status raced;
  // The entity as the transaction expects it (planned, re-planned when it
  // turns out to have moved on).
  bool exists = false;
  std::string etag;     // the version held (If-Match)
  std::string same_as;  // the handles of the version it continues (kSameAsMetadata)
  std::string body;     // its stored body
  // What the commit does to it: an intent (both versions; the same one
  // twice for an entity only read).
  bool next_exists = false;
  std::string next_body;
  // Progress.
  bool held = false;  // leased, or (absent) its intent created
  bool leased = false;
  bool intent_placed = false;
  std::string intent_etag;
  EntityIntent placed;
};

class PrewriteCommit {
 public:
  explicit PrewriteCommit(TxnBuffer& b)
      : b_(b),
        core_(*b.core),
        blobs_(*core_.blobs),
        clock_(*core_.clock),
        opts_(b.options),
        txn_id_(NewGuid()),
        width_(core_.CommitWidth()) {}

  Result<std::vector<CommittedWrite>> Run() {
    BT_RETURN_IF_ERROR(ValidateOptions(opts_));
    margin_ = RenewalMargin(opts_);
    deadline_ = clock_.Steady() + opts_.lock_timeout;
    WaitForOwnFinishing();
    Status s = Plan();
    if (s.ok()) HoldOwnRewrites();
    if (s.ok()) TakeStripes();
    if (s.ok()) s = Round("acquire", 2, [&] { return Acquire(); });
    if (s.ok()) s = Round("prewrite", 1, [&] { return Prewrite(); });
    if (s.ok()) s = Round("commit_point", 1, [&] { return CommitPoint(); });
    if (!s.ok()) {
      if (outcome_unknown_) {
        KeepStripesWhileLeased();  // left whole to whoever meets it
        return s;
      }
      Undo();
      KeepStripesWhileLeased();
      for (const Target& t : targets_)
        if (s.IsOutcomeUnknown() && !t.raced.ok()) return t.raced;
      if (s.IsOutcomeUnknown())
        return Status::Unavailable("transaction " + txn_id_ +
                                   ": a step before the commit point got no answer (" +
                                   s.message() + "); nothing was committed");
      return s;
    }
    return Committed();
  }

 private:
  ResolveContext Resolver() const {
    ResolveContext ctx{blobs_, clock_, opts_.lease_seconds, core_.inline_body_max};
    ctx.own_locks = &own_locks_;
    ctx.own_txn = txn_id_;
    return ctx;
  }
  // A step of the protocol, traced (a span "blobtable.commit.round") and
  // counted as `rounds` rounds (waits add theirs).
  template <typename Fn>
  Status Round(std::string_view name, int rounds, Fn fn) {
    Span span(core_.tracer(), "blobtable.commit.round", {{"round", name}});
    b_.rounds += rounds;
    Status s = fn();
    span.End(s);
    return s;
  }
  // Calls fn for every index at once (up to the width).
  template <typename Fn>
  void Each(size_t n, Fn fn) {
    ParallelFor(n, width_, [&](size_t i) { fn(i); });
  }

  // ---- Planning: what each entity is now, and what the commit makes of it ----

  Status Plan() {
    for (auto& [blob, intent] : b_.intents) {
      Target t;
      t.blob = blob;
      t.intent = &intent;
      targets_.push_back(std::move(t));
    }
    // Entities written without having been read are read first, at once.
    std::vector<Status> read(targets_.size());
    Each(targets_.size(), [&](size_t i) {
      Target& t = targets_[i];
      if (t.intent->read) {
        t.exists = t.intent->read_found;
        t.etag = t.intent->read_etag;
        t.same_as = t.intent->read_handles;
        if (t.exists) {
          auto body = EncodeEntity(*t.intent->read_entity);
          if (!body.ok())
            read[i] = body.status();
          else
            t.body = std::move(*body);
        }
        return;
      }
      read[i] = Look(t);
    });
    for (size_t i = 0; i < targets_.size(); ++i) {
      BT_RETURN_IF_ERROR(read[i]);
      const Target& t = targets_[i];
      BT_RETURN_IF_ERROR(Expectation(*t.intent, t.exists, t.etag, t.same_as));
      BT_RETURN_IF_ERROR(PlanWrite(targets_[i]));
    }
    return Status::OK();
  }

  // One stripe of each partition's lock (txn/lock_stripes.h): the one this
  // store's other transactions use least, chosen once this store's own
  // finishing on these rows let go of its stripe (WaitForOwnFinishing), so a
  // worker on its own rows keeps using one lock blob. The intents name it.
  void TakeStripes() {
    std::set<std::string> locks;
    for (const Target& t : targets_) locks.insert(t.intent->lock);
    for (const std::string& lock : locks) {
      Target t;
      // A stripe this store's background finishing is letting go of is
      // waited for (a round trip) rather than a new blob created; a second
      // at most. Not where commits finish inline: there the one letting go
      // is another caller's commit, which may be waiting its turn (the
      // simulation runs one actor at a time).
      const milliseconds wait =
          core_.finisher ? std::min(opts_.lock_timeout, milliseconds(1000)) : milliseconds(0);
      t.stripe = core_.lock_stripes->Take(lock, clock_.Steady(), wait);
      t.blob = t.stripe.blob();
      stripe_of_[lock] = t.blob;
      targets_.push_back(std::move(t));
    }
    // One global order over every blob a transaction leases (no deadlock):
    // its lock stripes first, then its entities, each by name. A busy entity
    // then never lets go of a stripe that an intent kept names (L2).
    std::sort(targets_.begin(), targets_.end(), [](const Target& a, const Target& b) {
      return std::make_pair(a.intent != nullptr, std::string_view(a.blob)) <
             std::make_pair(b.intent != nullptr, std::string_view(b.blob));
    });
  }

  // Reads an entity as a reader would see it (an intent's committed version),
  // unless the index upkeep looked already (in the round of its claims, or
  // beside the definitions read: ReadDefinitionsBesideLooks), or
  // this store's finishing rewrote it last, kept its body, and that version
  // meets what the transaction expects of the entity: the intent's condition
  // (If-Match that rewrite) checks that it is still there, and a failed one
  // is planned again from what is there (Replan). One that does not meet
  // the expectation may be stale: it is read, never refused unread.
  Status Look(Target& t) {
    std::optional<CommittedVersion> looked = std::move(t.intent->looked);
    t.intent->looked.reset();  // once: a commit tried again looks again
    if (!looked && core_.rewrites) {
      std::optional<Rewrites::Rewrite> r = core_.rewrites->LastWithBody(t.blob);
      if (r && Expectation(*t.intent, true, r->etag, r->same_as).ok()) {
        t.exists = true;
        t.etag = std::move(r->etag);
        t.same_as = std::move(r->same_as);
        t.body = std::move(*r->body);
        return Status::OK();
      }
    }
    if (!looked) {
      auto now = LookCommitted(blobs_, t.blob);
      if (!now.ok()) return now.status().WithContext(t.intent->Describe());
      looked = std::move(*now);
    }
    t.exists = looked->exists;
    t.etag = looked->exists ? looked->etag : "";
    t.same_as = looked->exists ? looked->handles : "";
    t.body = looked->exists ? std::move(looked->body) : "";
    return Status::OK();
  }

  Status PlanWrite(Target& t) {
    const Intent& i = *t.intent;
    // Every entity gets an intent, also one only read or checked: its
    // intent keeps its version and fences it the way a write's does, so a
    // writer must settle this transaction (through its record) before it
    // can change what the transaction read (invariant F1).
    if (i.kind == Kind::kPut || i.kind == Kind::kMerge) {
      t.next_exists = true;
      BT_ASSIGN_OR_RETURN(t.next_body, NewBody(i, t.exists ? &t.body : nullptr, clock_.Now()));
    } else {
      t.next_exists = i.kind != Kind::kDelete && t.exists;
      t.next_body = t.next_exists ? t.body : "";
    }
    return Status::OK();
  }

  // A commit right after this store's own commit on the same rows (issue
  // 32, goal 2) waits for that commit's finishing, before it reads what it
  // did not read (issue 57, goal 5: such a read would meet the intent and
  // read its record too, and the finishing's rewrite may spare it): an
  // intent still held would fail round 1 and send the rest one by one (its
  // partition lock is no obstacle: TakeStripes picks a stripe this store
  // does not hold). Another store's finishing is met as before.
  void WaitForOwnFinishing() {
    if (!core_.finisher) return;
    std::vector<std::string> blobs;
    for (const auto& [blob, intent] : b_.intents) blobs.push_back(blob);
    BT_SYNC_POINT("txn.own_finishing");
    const auto t0 = std::chrono::steady_clock::now();  // WaitSettled's time is real time
    (void)core_.finisher->WaitSettled(blobs, opts_.lock_timeout);  // else met as before
    Tally(&CallTally::finish_wait_ns, std::chrono::steady_clock::now() - t0);
    BT_SYNC_POINT("txn.own_finished");
  }

  // Then it holds each version it read at the ETag of its rewrite, which the
  // finishing reported: a condition on the handle read would fail (the
  // rewrite is the same version under another ETag, kSameAsMetadata) and
  // cost a look and a try more.
  void HoldOwnRewrites() {
    if (!core_.rewrites) return;
    for (Target& t : targets_) {
      if (t.intent == nullptr || !t.exists) continue;
      std::optional<Rewrites::Rewrite> r = core_.rewrites->Of(t.blob, t.etag);
      if (!r) continue;
      t.etag = r->etag;
      t.same_as = r->same_as;
    }
  }

  // ---- Rounds 1 and 2: at once; in order, waiting, once one is busy ----

  // Round 1, the stripes and the record (pending); round 2, the intents.
  // No intent of this transaction exists before its record does, so whoever
  // meets one decides through a record that exists (X2: never one created
  // from nothing that its pending create would race); and while it waits for
  // a busy stripe it holds no record, so Recover cannot take it for gone (L2).
  Status Acquire() {
    leases_since_ = clock_.Steady();
    const size_t stripes =
        static_cast<size_t>(std::find_if(targets_.begin(), targets_.end(),
                                         [](const Target& t) { return t.intent != nullptr; }) -
                            targets_.begin());
    BT_RETURN_IF_ERROR(TakeStripesAndRecord(stripes));
    BT_RETURN_IF_ERROR(LeasesStillOurs());  // L3: it may have waited
    return TakeIntents(stripes);
  }

  // Targets [0, stripes) are the stripes. All at once with the pending
  // create; a busy one (or one that failed) drops the record again (If-Match
  // its version: one a decider made aborted meanwhile ends the transaction)
  // and the stripes after it, waits for those in order, and creates the
  // record anew once it holds them all.
  Status TakeStripesAndRecord(size_t stripes) {
    std::vector<Status> got(stripes);
    Status pending;
    Each(stripes + 1, [&](size_t i) {
      if (i == stripes)
        pending = CreatePending();
      else
        got[i] = Take(targets_[i]);
    });
    BT_RETURN_IF_ERROR(pending);
    size_t first_failed = stripes;
    for (size_t i = 0; i < stripes; ++i) {
      if (got[i].ok()) continue;
      if (!got[i].IsBusy() && !got[i].IsConflict() && !got[i].IsNotFound()) return got[i];
      first_failed = std::min(first_failed, i);
    }
    if (first_failed == stripes) return Status::OK();
    BT_RETURN_IF_ERROR(DropRecord());
    BT_RETURN_IF_ERROR(LetGo(first_failed));
    for (size_t i = first_failed; i < stripes; ++i) BT_RETURN_IF_ERROR(TakeWaiting(targets_[i]));
    return CreatePending();
  }

  // Its record is still the pending version it created, read now that it
  // holds every stripe (beside its intents, so no round more): a Recover
  // that looked before a stripe's lease landed may have decided it aborted
  // and deleted it, and an intent of ours leased after that would have no
  // record naming it (P1). A Recover that decides after this read finds the
  // stripes leased when it looks again, and keeps the record.
  Status StillPending() {
    auto head = blobs_.Head(RecordBlobName(txn_id_), {});
    if (head.ok() && head->properties.etag == record_etag_) return Status::OK();
    if (!head.ok() && !head.status().IsNotFound()) return head.status();
    TxnRecord now;
    auto outcome = OutcomeOf(blobs_, txn_id_, &now);
    const Status moved = Status::Conflict("its record moved on before its intents were leased");
    if (outcome.ok() && *outcome == Outcome::kAborted) return NotCommitted(now, moved);
    return NotCommitted(TxnRecord{}, moved);
  }

  // Deletes the pending record this coordinator created (If-Match its
  // version). Refused: a decider made it aborted first (LeaseLost).
  Status DropRecord() {
    WriteOptions as_created;
    as_created.conditions.if_match = record_etag_;
    Status gone = blobs_.Delete(RecordBlobName(txn_id_), as_created);
    if (gone.ok() || gone.IsNotFound()) {
      record_sent_ = false;
      record_etag_.clear();
      return Status::OK();
    }
    TxnRecord now;
    auto outcome = OutcomeOf(blobs_, txn_id_, &now);
    if (outcome.ok() && *outcome == Outcome::kAborted) return NotCommitted(now, gone);
    return gone.WithContext("transaction " + txn_id_ + ", letting go of its record");
  }

  // Targets [first, end) are the entities: each gets its intent at once; a
  // busy one lets go of the entities after it (never a stripe: they come
  // first) and takes them in order, waiting.
  Status TakeIntents(size_t first) {
    std::vector<Status> got(targets_.size());
    Status pending;
    Each(targets_.size() - first + 1, [&](size_t j) {
      if (first + j == targets_.size())
        pending = StillPending();
      else
        got[first + j] = Take(targets_[first + j]);
    });
    BT_RETURN_IF_ERROR(pending);
    // An entity that only moved to the same version (its intent finished
    // since it was read, often by this store's own background finishing),
    // or to one its plan still fits, is taken again at once, in the same
    // round: no sorted suffix let go for it. One look and one try each,
    // never a wait, so holding the rest meanwhile cannot deadlock.
    std::vector<Status> final(targets_.size());  // what the transaction can only fail on
    Each(targets_.size() - first, [&](size_t j) {
      const size_t i = first + j;
      Target& t = targets_[i];
      if (got[i].ok() || !(got[i].IsBusy() || got[i].IsConflict() || got[i].IsNotFound())) return;
      auto moved = Replan(t);
      if (!moved.ok())
        final[i] = moved.status();
      else if (*moved)
        got[i] = Take(t);
    });
    for (const Status& f : final) BT_RETURN_IF_ERROR(f);
    size_t first_failed = targets_.size();
    for (size_t i = first; i < targets_.size(); ++i) {
      if (got[i].ok()) continue;
      if (!got[i].IsBusy() && !got[i].IsConflict() && !got[i].IsNotFound()) return got[i];
      first_failed = std::min(first_failed, i);
    }
    if (first_failed < targets_.size()) {
      // Keep the sorted prefix; let go of the rest and take it in order.
      BT_RETURN_IF_ERROR(LetGo(first_failed));
      for (size_t i = first_failed; i < targets_.size(); ++i)
        BT_RETURN_IF_ERROR(TakeWaiting(targets_[i]));
    }
    BT_SYNC_POINT("txn.locks_acquired");
    return Status::OK();
  }

  // The record, pending: every entity this transaction may place an intent
  // on and the stripes it holds, so that Recover finds it without listing
  // every entity (P1). Its ETag is what the commit point is conditional on
  // (X2): a decider that rewrites it aborted fences the commit point for
  // good. Created before any intent of ours exists; one found in its place
  // (a late decider's, or one left by an earlier release) ends the
  // transaction here.
  Status CreatePending() {
    TxnRecord rec;
    rec.txn_id = txn_id_;
    rec.state = TxnState::kPending;
    for (const Target& t : targets_) {
      if (t.intent != nullptr)
        rec.writes.push_back({t.blob, ""});
      else
        rec.locks.push_back(t.blob);
    }
    PutOptions create;
    create.conditions.if_none_match = std::string(kAnyETag);
    record_sent_ = true;
    auto put = blobs_.Put(RecordBlobName(txn_id_), EncodeRecord(rec), create);
    if (put.ok()) {
      record_etag_ = put->etag;
      return Status::OK();
    }
    if (!put.status().IsConflict() && !put.status().IsOutcomeUnknown()) return put.status();
    // Ours, after a lost answer; or a decider's, there first.
    TxnRecord now;
    std::string etag;
    auto outcome = OutcomeOf(blobs_, txn_id_, &now, &etag);
    BT_RETURN_IF_ERROR(outcome.status());
    if (!etag.empty() && now.state == TxnState::kPending) {
      record_etag_ = etag;
      return Status::OK();
    }
    if (now.state == TxnState::kAborted && !etag.empty())
      return NotCommitted(now, Status::Conflict("its pending record met an aborted one"));
    return put.status().WithContext("transaction " + txn_id_ + ", its record");
  }

  // One try at a target. Busy: held by someone; Conflict/NotFound: the entity
  // is not at the version planned. An entity to write gets its intent now,
  // at the version planned (which validates what the transaction read), and
  // its lease in round 2: an intent may be left without a lease (no commit
  // point can follow: the lease at the intent's version would fail once it
  // is changed), never a lease without the intent that says whose it is.
  Status Take(Target& t) {
    if (t.intent == nullptr) return TakeLock(t);
    PutOptions o;
    if (t.exists)
      o.conditions.if_match = t.etag;
    else
      o.conditions.if_none_match = std::string(kAnyETag);
    o.metadata = {{kPrewriteMetadata, txn_id_}};
    t.placed = IntentOf(t);
    auto put = blobs_.Put(t.blob, EncodeIntent(t.placed), o);
    if (put.status().IsOutcomeUnknown()) {
      intent_maybe_left_ = true;  // it may have landed
      if (WrittenByAnother(t.blob)) t.raced = RacedOn(t, put.status());
    }
    BT_RETURN_IF_ERROR(put.status());
    t.held = t.intent_placed = true;
    t.intent_etag = put->etag;
    return Status::OK();
  }

  // After an intent whose answer was lost and whose retry was refused:
  // another client's version or intent on the blob now means the entity
  // was written since it was read, whether or not ours landed first (a
  // writer that met it decided this transaction aborted). A race lost:
  // the transaction ends as after any OutcomeUnknown before its commit
  // point (Run undoes, keeping the record and the stripes while an intent
  // of ours may be left), but answers Conflict, not Unavailable, with the
  // read marked changed, so a plain write runs again (kv/table_indexed.cc)
  // and a racer for a unique value is told the holder (issue 55, item 12).
  bool WrittenByAnother(const std::string& blob) {
    auto head = blobs_.Head(blob, {});
    return head.ok() && PrewritingTransaction(head->properties) != txn_id_;
  }
  Status RacedOn(const Target& t, const Status& unknown) {
    t.intent->changed_since_read = true;
    return Status::Conflict("transaction " + txn_id_ + ": " + t.intent->Describe() +
                            ": written by another client since it was read (" + unknown.message() +
                            "); nothing was committed");
  }

  Status TakeLock(Target& t) {
    auto lease = blobs_.AcquireLease(t.blob, opts_.lease_seconds, txn_id_, {});
    if (lease.status().IsNotFound()) {
      // Lock blobs exist from a partition's first transaction on.
      PutOptions create;
      create.conditions.if_none_match = std::string(kAnyETag);
      Status made = blobs_.Put(t.blob, "", create).status();
      if (!made.ok() && !made.IsConflict() && !made.IsBusy()) return made;
      lease = blobs_.AcquireLease(t.blob, opts_.lease_seconds, txn_id_, {});
    }
    if (lease.status().IsOutcomeUnknown()) t.lease_maybe_left = true;
    BT_RETURN_IF_ERROR(lease.status());
    t.held = t.leased = true;
    t.stripe.NoteLeased();
    std::lock_guard<std::mutex> lock(mu_);
    own_locks_.insert(t.blob);
    return Status::OK();
  }

  // After a failure: a stripe whose lease may still be held here (left with
  // an unknown outcome, or a release without a clear answer) is not this
  // store's first choice until that lease has run out (txn/lock_stripes.h).
  void KeepStripesWhileLeased() {
    const SteadyTime until = leases_since_ + std::chrono::seconds(opts_.lease_seconds);
    for (Target& t : targets_)
      if (t.intent == nullptr && (t.leased || t.lease_maybe_left)) t.stripe.KeepUntil(until);
  }

  // Takes a target, waiting while it is busy (up to lock_timeout) and
  // settling whatever another transaction left on it.
  Status TakeWaiting(Target& t) {
    int round = 0;
    for (;;) {
      BT_RETURN_IF_ERROR(RenewIfDue());
      Status s = Take(t);
      if (s.ok()) return s;
      if (!s.IsBusy() && !s.IsConflict() && !s.IsNotFound()) return s;
      if (t.intent != nullptr) {
        BT_ASSIGN_OR_RETURN(bool moved, Replan(t));
        if (moved) continue;  // at another version now: try that one at once
      }
      if (clock_.Steady() >= deadline_)
        return Status::LockTimeout(
            "transaction " + txn_id_ + ": " + (t.intent ? t.intent->Describe() : "lock " + t.blob) +
            " stayed busy for " + std::to_string(opts_.lock_timeout.count()) + " ms");
      ++b_.lock_waits;
      ++b_.rounds;  // the try after the wait
      core_.Backoff(&round);
    }
  }

  // Looks at an entity that could not be taken as planned: settles another
  // transaction's intent or mark on it, and plans again if it moved on.
  // True if the plan changed (try again now); false if it is busy (wait).
  Result<bool> Replan(Target& t) {
    auto cur = blobs_.Get(t.blob, {});
    if (!cur.ok() && !cur.status().IsNotFound()) return cur.status();
    if (cur.ok() && (!MarkingTransaction(cur->properties).empty() ||
                     cur->properties.lease_status == LeaseStatus::kLocked)) {
      // Another transaction's intent or mark (settled, or waited for), or a
      // lease a finished one did not let go of (released).
      Status r = ResolveBlob(Resolver(), t.blob, cur->properties);
      if (!r.ok() && !r.IsBusy()) return r;
      if (!MarkingTransaction(cur->properties).empty()) return r.ok();
    }
    const bool exists = cur.ok();
    const std::string etag = exists ? cur->properties.etag : "";
    if (exists == t.exists && etag == t.etag) return false;  // leased by another client
    if (exists && t.exists && SameVersion(cur->properties, t.etag)) {
      t.etag = etag;  // the same version, rewritten by whoever finished it
      t.same_as = SameAsOf(cur->properties);
      t.body = cur->data;
      return true;
    }
    const std::string same_as = exists ? SameAsOf(cur->properties) : "";
    BT_RETURN_IF_ERROR(Expectation(*t.intent, exists, etag, same_as));
    t.exists = exists;
    t.etag = etag;
    t.same_as = same_as;
    t.body = exists ? std::move(cur->data) : "";
    BT_RETURN_IF_ERROR(PlanWrite(t));
    return true;
  }

  // ---- Round 3: every intent leased infinitely, at its version ----

  Status Prewrite() {
    // No lease on an intent once this coordinator's stripes may have run
    // out by its own clock (L3): a decider may be undoing its intents.
    BT_RETURN_IF_ERROR(LeasesStillOurs());
    std::vector<Status> done(targets_.size() + 1);
    Each(targets_.size() + 1, [&](size_t i) {
      if (i == targets_.size())
        done[i] = RenewIfDue();  // beside the prewrites
      else if (targets_[i].intent != nullptr)
        done[i] = Place(targets_[i]);
    });
    for (const Status& s : done) {
      if (s.IsConflict()) return WhoUndid(s);
      BT_RETURN_IF_ERROR(s);
    }
    BT_SYNC_POINT("txn.prewritten");
    return Status::OK();
  }

  // An intent of ours was gone when round 3 came to lease it (`gone`): the
  // record, aborted, tells who decided: a writer that met one of our
  // intents and went first (Conflict, naming that entity), or a decider
  // that took this coordinator for gone (LeaseLost). With no aborted record
  // to read (a decider deletes it once every intent is undone), a
  // coordinator past its local deadline was taken for gone (L3: the lease
  // request waited in flight); within it, `gone`.
  Status WhoUndid(const Status& gone) {
    TxnRecord record;
    auto outcome = OutcomeOf(blobs_, txn_id_, &record);
    if (outcome.ok() && *outcome == Outcome::kAborted) return NotCommitted(record, gone);
    if (Status lost = LeasesStillOurs(); !lost.ok()) return lost;
    return gone;
  }

  Status Place(Target& t) {
    AccessConditions at;
    at.if_match = t.intent_etag;
    auto lease = blobs_.AcquireLease(t.blob, kInfiniteLease, txn_id_, at);
    if (lease.status().IsConflict() || lease.status().IsNotFound())
      return Status::Conflict(t.intent->Describe() +
                              ": written by another client during the "
                              "commit");
    BT_RETURN_IF_ERROR(lease.status());
    t.leased = true;
    return Status::OK();
  }

  EntityIntent IntentOf(const Target& t) const {
    EntityIntent i;
    i.txn_id = txn_id_;
    i.lock = stripe_of_.at(t.intent->lock);
    i.prev_exists = t.exists;
    i.prev_etag = t.exists ? t.etag : "";
    i.prev_body = t.exists ? t.body : "";
    i.prev_same = t.exists ? t.same_as : "";
    i.next_exists = t.next_exists;
    i.next_body = t.next_body;
    i.reads_only = !t.intent->writes();
    return i;
  }

  // Renews every finite lease (the partition locks') when less than the
  // margin remains. Before the commit point, a lease that may have run out
  // means this coordinator may have been taken over.
  Status RenewIfDue() {
    std::lock_guard<std::mutex> guard(renew_mu_);
    BT_RETURN_IF_ERROR(LeasesStillOurs());
    const auto remaining =
        std::chrono::seconds(opts_.lease_seconds) - (clock_.Steady() - leases_since_);
    if (remaining > margin_) return Status::OK();
    const SteadyTime before = clock_.Steady();
    std::vector<Target*> finite;
    for (Target& t : targets_)
      if (t.leased && t.intent == nullptr) finite.push_back(&t);
    std::vector<Status> renewed(finite.size());
    Each(finite.size(),
         [&](size_t i) { renewed[i] = blobs_.RenewLease(finite[i]->blob, txn_id_, {}).status(); });
    for (size_t i = 0; i < finite.size(); ++i)
      if (!renewed[i].ok())
        return Status::LeaseLost("transaction " + txn_id_ + " could not renew its lease on " +
                                 finite[i]->blob + ": " + renewed[i].message());
    // Answered after the old deadline: the lease may have lapsed before the
    // renewal landed (a lease that ran out and nobody took is renewed), and
    // a Recover that looked then took this coordinator for gone (L3; the
    // model's trail new-late-renewal).
    BT_RETURN_IF_ERROR(LeasesStillOurs());
    leases_since_ = before;
    BT_SYNC_POINT("txn.renewed");
    return Status::OK();
  }

  // A lease past its local deadline is lost (L3): once this coordinator's
  // own monotonic clock says its stripes' leases may have run out (counted
  // from before the requests that took or renewed them), another client may
  // have taken it for gone and decided it. It renews nothing then, whatever
  // a renewal would answer (a lease that ran out and that nobody took since
  // can be renewed, on Azure as on the local store).
  Status LeasesStillOurs() const {
    const auto held = clock_.Steady() - leases_since_;
    if (held < std::chrono::seconds(opts_.lease_seconds)) return Status::OK();
    return Status::LeaseLost(
        "transaction " + txn_id_ + ": by its own clock its partition locks' leases (" +
        std::to_string(opts_.lease_seconds) + " s) may have run out (" +
        std::to_string(std::chrono::duration_cast<milliseconds>(held).count()) +
        " ms since they were taken or renewed): another client may have decided it aborted");
  }

  // ---- Round 4: the commit point ----

  Status CommitPoint() {
    BT_RETURN_IF_ERROR(RenewIfDue());
    BT_RETURN_IF_ERROR(CheckSchemaAge(b_, clock_.Steady()));
    TxnRecord rec;
    rec.txn_id = txn_id_;
    rec.state = TxnState::kCommitted;
    for (const Target& t : targets_) {
      if (t.intent_placed) rec.writes.push_back({t.blob, t.intent_etag});
      if (t.intent == nullptr) rec.locks.push_back(t.blob);
    }
    // The pending version, or nothing (X2): a decider that made it aborted
    // first fences this for good, however late it arrives, deleted or not.
    PutOptions commit;
    commit.conditions.if_match = record_etag_;
    // Not after the partition locks' leases may have run out: a recoverer
    // could be deciding this transaction by then. The condition keeps the
    // two apart anyway; the deadline keeps the commit point from arriving
    // long after this coordinator stopped counting on its leases.
    commit.deadline = leases_since_ + std::chrono::seconds(opts_.lease_seconds);
    auto put = blobs_.Put(RecordBlobName(txn_id_), EncodeRecord(rec), commit);
    if (put.ok()) {
      BT_SYNC_POINT("txn.committed");
      return Status::OK();
    }
    return Settle(put.status());
  }

  // The entity whose writer decided this transaction aborted, going first
  // (it met our intent there before we leased it, and its aborted record
  // `rec` names it): Conflict, as for any write in between. "" if a decider
  // did (it found this coordinator gone), or there is no such record.
  std::string WriterThatWentFirst(const TxnRecord& rec) const {
    if (rec.state != TxnState::kAborted || rec.met.empty()) return "";
    for (const Target& t : targets_)
      if (t.blob == rec.met && t.intent != nullptr) return t.intent->Describe();
    return "";
  }

  // Not committed, decided by `rec` (aborted) after `failure`: Conflict
  // naming the entity a writer met first, else LeaseLost (a decider took
  // this coordinator for gone), else the failure itself.
  Status NotCommitted(const TxnRecord& rec, const Status& failure) const {
    const std::string met = WriterThatWentFirst(rec);
    // What this transaction read of the entity (or expected of it) no
    // longer holds: a race lost, which a plain write runs again
    // (kv/table_indexed.cc), as against a condition that failed.
    for (const Target& t : targets_)
      if (!met.empty() && t.blob == rec.met && t.intent != nullptr)
        t.intent->changed_since_read = true;
    if (!met.empty())
      return Status::Conflict("transaction " + txn_id_ + ": " + met +
                              ": written by another client during the commit (that writer "
                              "decided the transaction aborted): nothing was committed");
    if (failure.IsConflict() || failure.IsNotFound())
      return Status::LeaseLost("transaction " + txn_id_ +
                               " was decided aborted by another client before its commit point "
                               "(it stalled past its leases): nothing was committed");
    return failure.WithContext("transaction " + txn_id_ + " (nothing was committed)");
  }

  // The commit point failed or got no clear answer: the record says what
  // happened; with none, deciding "abort" ourselves makes it certain.
  Status Settle(const Status& failure) {
    TxnRecord record;  // as read now: a writer's aborted record stays as made
    auto outcome = OutcomeOf(blobs_, txn_id_, &record);
    const bool refused = failure.IsConflict() || failure.IsNotFound();
    const std::string met = refused ? WriterThatWentFirst(record) : "";
    if (outcome.ok() && *outcome == Outcome::kAborted && IntentsInPlace().first == 0) {
      // An aborted record tells only beside an intent still in place (R1):
      // a decider's create that arrived after this transaction committed
      // and was finished by others stands beside rewritten intents only.
      outcome = OutcomeFromRewrites();
      // Written over since, so they tell nothing. But our create was refused
      // beside the record of a writer that went first: it met our intent not
      // yet leased, before our commit point, and created the record then
      // (a create of ours that was applied is never answered Conflict: a
      // retry refused after a lost answer is OutcomeUnknown,
      // storage/azure/write_check.h). Its undo, or a reader's, under our
      // lease, then its write, may well come before this look.
      if (outcome.ok() && *outcome == Outcome::kUndecided && !met.empty())
        outcome = Outcome::kAborted;
    } else if (outcome.ok() && *outcome == Outcome::kUndecided) {
      auto [in_place, placed] = IntentsInPlace();
      outcome = in_place == placed ? DecideAbort(blobs_, txn_id_)
                                   : Result<Outcome>(OutcomeFromRewrites());
    }
    if (outcome.ok() && *outcome == Outcome::kCommitted) {
      BT_SYNC_POINT("txn.committed");
      return Status::OK();
    }
    if (outcome.ok() && *outcome == Outcome::kAborted) {
      if (!refused) record.met.clear();  // our own decision, after a failure of our own
      return NotCommitted(record, failure);
    }
    outcome_unknown_ = true;
    return Status::OutcomeUnknown(
        "transaction " + txn_id_ + ": its commit point was sent but the answer was lost (" +
        failure.ToString() +
        "), and reading back could not tell whether it took effect. "
        "Read the entities it writes (a read settles it) or run `blobtable recover`, then decide");
  }

  // How many of the intents placed are still in place, read now, and how
  // many there are. All of them with no record: nobody finished one, so the
  // record was never written (not written and removed). Any of them beside
  // an aborted record read before: no late one (R1: a late one exists only
  // once every intent was rewritten).
  std::pair<size_t, size_t> IntentsInPlace() {
    size_t in_place = 0, placed = 0;
    for (const Target& t : targets_) {
      if (!t.intent_placed) continue;
      ++placed;
      auto head = blobs_.Head(t.blob, {});
      if (head.ok() && head->properties.etag == t.intent_etag) ++in_place;
    }
    return {in_place, placed};
  }

  // With no record and an intent gone, the record was written and removed
  // by a successor that finished every intent: what it rewrote them as
  // tells how (stamped with this transaction and kSameAsMetadata naming the
  // intent: finished committed; naming the version before: undone).
  // Undecided if nothing says (every blob was written again since).
  Outcome OutcomeFromRewrites() {
    for (const Target& t : targets_) {
      // An intent that only reads is rewritten as the same version either
      // way: it does not tell.
      if (!t.intent_placed || t.placed.reads_only) continue;
      auto head = blobs_.Head(t.blob, {});
      if (!head.ok()) continue;
      auto stamp = head->properties.metadata.find(kTxnMetadata);
      if (stamp == head->properties.metadata.end() || stamp->second != txn_id_) continue;
      if (SameVersion(head->properties, t.intent_etag)) return Outcome::kCommitted;
      if (t.exists && SameVersion(head->properties, t.etag)) return Outcome::kAborted;
    }
    return Outcome::kUndecided;
  }

  // ---- Before the commit point: undo; after it: finish ----

  // Lets go of targets [from, end): the intents first, then the stripes
  // (a liveness signal is held while anything may be leased under it, L2).
  // Unavailable if an intent could not be undone: the transaction stops
  // there, rather than wait on with an intent left naming a stripe it let
  // go of.
  Status LetGo(size_t from) {
    std::vector<Target*> entities, locks;
    for (size_t i = from; i < targets_.size(); ++i)
      (targets_[i].intent ? entities : locks).push_back(&targets_[i]);
    Each(entities.size(), [&](size_t i) { Drop(*entities[i]); });
    const bool left = intent_maybe_left_;
    if (!left || from == 0) Each(locks.size(), [&](size_t i) { Drop(*locks[i]); });
    if (left)
      return Status::Unavailable("transaction " + txn_id_ +
                                 ": an intent it let go of could not be undone");
    return Status::OK();
  }

  // Lets go of a target taken in round 1. An intent it could not undo is
  // noted (intent_maybe_left_): Undo keeps the record then.
  void Drop(Target& t) {
    if (!t.held) return;
    if (t.intent_placed) {
      if (!FinishIntent(Resolver(), t.blob, t.placed, PlacedProps(t), /*committed=*/false).ok())
        intent_maybe_left_ = true;
    } else if (t.leased) {
      Status released = blobs_.ReleaseLease(t.blob, txn_id_, {}).status();
      t.lease_maybe_left = LeaseMayBeLeft(released);
    }
    if (t.intent == nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      own_locks_.erase(t.blob);
    }
    t.held = t.leased = t.intent_placed = false;
  }

  BlobProperties PlacedProps(const Target& t) const {
    BlobProperties p;
    p.etag = t.intent_etag;
    p.lease_status = t.leased ? LeaseStatus::kLocked : LeaseStatus::kUnlocked;
    return p;
  }

  // Before the commit point: every intent undone, the stripes let go of,
  // then the record goes, pending or aborted (this coordinator places no
  // intent after, and its commit point, conditional on the pending version,
  // can no longer succeed), unless an intent may be left: whoever meets it
  // then settles it through the record.
  void Undo() {
    (void)LetGo(0);
    if (record_sent_ && !intent_maybe_left_) (void)blobs_.Delete(RecordBlobName(txn_id_), {});
  }

  Result<std::vector<CommittedWrite>> Committed() {
    auto finish = MakeFinishJob();
    std::map<std::string, std::string> etags;  // blob -> handle on its new version
    for (const Target& t : targets_)
      if (t.intent && t.intent->writes()) etags[t.blob] = t.next_exists ? t.intent_etag : "";
    if (core_.finisher) {
      std::vector<std::string> settles;  // what the finishing settles: every target it holds
      for (const Target& t : targets_)
        if (t.intent_placed || t.leased) settles.push_back(t.blob);
      core_.finisher->Submit(std::move(finish), std::move(settles));
    } else {
      finish();
    }
    std::vector<const Intent*> ordered;
    for (const auto& [blob, intent] : b_.intents)
      if (intent.writes()) ordered.push_back(&intent);
    std::sort(ordered.begin(), ordered.end(),
              [](const Intent* a, const Intent* b) { return a->order < b->order; });
    std::vector<CommittedWrite> out;
    for (const Intent* i : ordered)
      out.push_back({i->table, i->pk, i->rk, etags[i->blob], /*applied=*/false});
    return out;
  }

  // What follows the commit point, as a job that owns everything it needs
  // (it may run after this coordinator and its transaction are gone).
  std::function<void()> MakeFinishJob() {
    struct Job {
      std::shared_ptr<BlobStore> blobs;
      Clock* clock;
      int lease_seconds;
      size_t inline_body_max;
      size_t width;
      std::string txn_id;
      std::vector<std::pair<std::string, EntityIntent>> intents;
      std::vector<BlobProperties> seen;
      std::vector<std::string> leases;          // finite leases to let go of
      std::vector<LockStripes::Claim> stripes;  // theirs, given back once let go of
      SteadyTime leases_until;                  // when the finite leases run out
      Finisher* finisher;  // the store's, told as each target is settled; or null
      std::shared_ptr<Rewrites> rewrites;
      std::shared_ptr<const Observing> observing;  // its tracer, if any
    };
    auto job = std::make_shared<Job>();
    job->blobs = core_.blobs;
    job->clock = &clock_;
    job->lease_seconds = opts_.lease_seconds;
    job->inline_body_max = core_.inline_body_max;
    job->width = width_;
    job->txn_id = txn_id_;
    job->finisher = core_.finisher.get();
    job->leases_until = leases_since_ + std::chrono::seconds(opts_.lease_seconds);
    job->rewrites = core_.rewrites;
    job->observing = core_.observing;
    for (Target& t : targets_) {
      if (t.intent_placed) {
        job->intents.emplace_back(t.blob, t.placed);
        job->seen.push_back(PlacedProps(t));
      } else if (t.leased) {
        job->leases.push_back(t.blob);
        job->stripes.push_back(std::move(t.stripe));
      }
    }
    return [job] {
      BT_SYNC_POINT("txn.finishing");
      Span span(job->observing ? job->observing->tracer.get() : nullptr, "blobtable.finish",
                {{"txn_id", job->txn_id}});
      ResolveContext ctx{*job->blobs, *job->clock, job->lease_seconds, job->inline_body_max};
      ctx.finisher = job->finisher;
      ctx.rewrites = job->rewrites.get();
      const size_t n = job->intents.size(), m = job->leases.size();
      std::vector<Status> done(n);
      std::atomic<bool> all{true};
      // The partition locks first (they decide nothing once the record
      // exists, invariant L2): where requests go one at a time, the next
      // commit on these rows finds this store's stripe free again.
      ParallelFor(m + n, job->width, [&](size_t k) {
        if (k < m) {
          job->stripes[k].NoteReleasing();
          Status released = job->blobs->ReleaseLease(job->leases[k], job->txn_id, {}).status();
          if (LeaseMayBeLeft(released))
            job->stripes[k].KeepUntil(job->leases_until);
          else
            job->stripes[k].Release();
          if (job->finisher != nullptr) job->finisher->Settled(job->leases[k]);
          return;
        }
        const size_t i = k - m;
        // Rewritten plain, then its lease let go.
        done[i] = FinishIntent(ctx, job->intents[i].first, job->intents[i].second, job->seen[i],
                               /*committed=*/true);
        if (!done[i].ok())
          all = false;
        else
          BT_SYNC_POINT("txn.finished_one");
      });
      BT_SYNC_POINT("txn.finished");
      // Once every intent is plain, the record goes (R2). If one could not
      // be rewritten, it stays for whoever meets that intent, or Recover.
      if (all) {
        (void)job->blobs->Delete(RecordBlobName(job->txn_id), {});
        BT_SYNC_POINT("txn.record_deleted");
      }
      span.End(all ? Status::OK() : Status::Unavailable("an intent was left to a resolver"));
    };
  }

  TxnBuffer& b_;
  const TxnContext& core_;
  BlobStore& blobs_;
  Clock& clock_;
  const TransactionOptions opts_;
  const std::string txn_id_;
  const size_t width_;
  milliseconds margin_{0};
  SteadyTime deadline_;
  SteadyTime leases_since_;  // before the oldest request of the current leases
  std::vector<Target> targets_;
  std::set<std::string> own_locks_;
  std::map<std::string, std::string>
      stripe_of_;  // a partition's first lock blob -> the stripe held
  std::mutex mu_, renew_mu_;
  bool outcome_unknown_ = false;
  bool record_sent_ = false;  // its record may exist
  std::string record_etag_;   // the pending record's version: the commit point's condition
  // An intent of this transaction may be in place that no target holds (a
  // put whose answer was lost, an undo that failed): the record stays.
  std::atomic<bool> intent_maybe_left_{false};
};

}  // namespace

Result<std::vector<CommittedWrite>> CommitPrewritten(TxnBuffer& buffer) {
  PrewriteCommit c(buffer);
  return c.Run();
}

}  // namespace blobtable::internal
