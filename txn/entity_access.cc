// SPDX-License-Identifier: Apache-2.0
#include "txn/entity_access.h"

#include <algorithm>
#include <optional>

#include "model/entity_codec.h"
#include "model/key_rules.h"
#include "model/inline_body.h"
#include "txn/definitions_check.h"
#include "txn/intent_resolver.h"
#include "txn/recovery.h"
#include "txn/txn_record.h"
#include "util/macros.h"
#include "util/thread_spare.h"

namespace blobtable::internal {
namespace {

// Waits out an entity held by a transaction or another client: each Next()
// settles the transaction on the entity (finishing or undoing it if its
// coordinator died), then backs off; Busy once busy_timeout has passed.
class BusyWait {
 public:
  BusyWait(const TxnContext& core, const std::string& blob) : core_(core), blob_(blob) {}

  Status Next(const Status& busy) {
    auto now = core_.clock->Steady();
    if (!started_) {
      started_ = true;
      deadline_ = now + core_.busy_timeout;
    }
    if (now >= deadline_)
      return Status::FromStorage(Code::kBusy, busy.http_status(), busy.storage_code(),
                                 "held by a transaction in progress or another client for "
                                 "longer than the busy timeout (" +
                                     busy.message() + ")");
    // A write must not land before a decided transaction's writes: settle
    // whatever transaction holds the entity before trying again.
    auto head = core_.blobs->Head(blob_, {});
    if (head.ok()) {
      Status r = ResolveBlob(core_.Resolver(), blob_, head->properties);
      if (!r.ok() && !r.IsBusy()) return r;
    }
    core_.Backoff(&round_);
    return Status::OK();
  }

 private:
  const TxnContext& core_;
  const std::string& blob_;
  bool started_ = false;
  SteadyTime deadline_;
  int round_ = 0;  // backoff only
};

Status NoLongerMatches(std::string_view if_match, const std::string& now) {
  return Status::Conflict("ETag " + std::string(if_match) + " no longer matches (now " + now + ")");
}

// One try at a write or delete, and what comes next.
struct Try {
  enum Kind { kDone, kHeld, kRaced, kFailed } kind;
  Status status;     // kHeld: what holds the entity; kFailed: the answer
  std::string etag;  // kDone: of the version written
};
Try Done(std::string etag = "") { return {Try::kDone, Status::OK(), std::move(etag)}; }
Try Held(Status s) { return {Try::kHeld, std::move(s), ""}; }
Try Raced() { return {Try::kRaced, Status::OK(), ""}; }
Try Failed(Status s) { return {Try::kFailed, std::move(s), ""}; }

// Runs `attempt` until it is done or fails: while the entity is held it
// waits (not counted), after a race it tries again (counted, up to
// max_merge_attempts).
template <typename Attempt>
Try Settle(const TxnContext& core, const std::string& blob, Attempt attempt) {
  BusyWait busy(core, blob);
  const int attempts = std::max(1, core.max_merge_attempts);
  for (int n = 0; n < attempts; ++n) {
    Try t = attempt();
    for (; t.kind == Try::kHeld; t = attempt())
      if (Status waited = busy.Next(t.status); !waited.ok()) return Failed(waited);
    if (t.kind != Try::kRaced) return t;
  }
  return Failed(Status::Conflict("gave up after " + std::to_string(attempts) +
                                 " attempts, each raced by another writer"));
}

// A reader that met a decided intent leaves rewriting it plain to the
// store's background thread: the read never waits for it (without one,
// StoreOptions::finish_in_background off, it rewrites it before it
// returns). Only that intent, at the version seen: by the time the job
// runs, the next transaction's intent may be on the entity, and it is not
// the reader's to settle.
void SettleLater(const TxnContext& core, const std::string& blob, const GetResult& seen,
                 bool committed) {
  auto job = [blobs = core.blobs, clock = core.clock, lease = core.txn_lease_seconds,
              inline_max = core.inline_body_max, finisher = core.finisher.get(),
              rewrites = core.rewrites, blob, seen, committed] {
    ResolveContext ctx{*blobs, *clock, lease, inline_max};
    ctx.finisher = finisher;
    ctx.rewrites = rewrites.get();
    (void)FinishDecided(ctx, blob, seen, committed);
  };
  if (core.finisher)
    core.finisher->Submit(std::move(job), {blob});
  else
    job();
}

// The version an intent on `seen` stands for now; nullopt if the blob moved
// on while it was looked at.
Result<std::optional<IntentView>> View(const TxnContext& core, const std::string& blob,
                                       const CachedGet& seen) {
  if (!seen.stale) return ViewIntent(*core.blobs, blob, seen.result);
  // Storage is out of reach: the version before the transaction.
  BT_ASSIGN_OR_RETURN(IntentView prev, PreviousVersion(blob, seen.result));
  return std::optional<IntentView>(std::move(prev));
}

// True if `blob` is now at `etag_now` and that version is the one `etag`
// named (an intent rewritten plain keeps its handle: kSameAsMetadata).
bool SameAs(BlobStore& blobs, const std::string& blob, const std::string& etag_now,
            std::string_view etag) {
  auto head = blobs.Head(blob, {});
  return head.ok() && (etag_now.empty() || head->properties.etag == etag_now) &&
         SameVersion(head->properties, etag);
}

// True if `blob` holds a transaction's intent now: a condition that failed
// on it is decided by that transaction (wait, or settle it).
bool HoldsIntent(BlobStore& blobs, const std::string& blob) {
  auto head = blobs.Head(blob, {});
  return head.ok() && !PrewritingTransaction(head->properties).empty();
}

// The ETag a write of "any existing version" sends (If-Match "*" would also
// match an intent placed for a new entity): Held while a transaction's
// intent is on the entity.
Try CurrentETag(const Result<GetResult>& head, const std::string& blob, std::string* etag) {
  if (head.status().IsNotFound()) return Failed(Status::NotFound("not found"));
  if (!head.ok()) return Failed(head.status());
  if (Status old = RefuseProtocolOneMark(head->properties, blob); !old.ok()) return Failed(old);
  const std::string txn = PrewritingTransaction(head->properties);
  if (!txn.empty()) return Held(Status::Busy("held by transaction " + txn));
  *etag = head->properties.etag;
  return Done();
}

// What a failed condition means once the entity is read again: a race the
// caller retries at `*match` (moved on to the rewrite of the version it
// named), or Conflict naming the ETag now.
Try AfterFailedMatch(const TxnContext& core, const std::string& blob, std::string_view if_match,
                     std::string* match) {
  auto now = ReadVisible(core, blob, ReadPolicy::Validate());
  if (now.status().IsNotFound()) return Failed(Status::NotFound("not found"));
  if (!now.ok()) return Failed(now.status());
  if (SameAs(*core.blobs, blob, now->etag, *match)) {
    *match = now->etag;  // the version it named, rewritten: write at it
    return Raced();
  }
  return Failed(NoLongerMatches(if_match, now->etag));
}

Try TryWrite(const TxnContext& core, const std::string& blob, WriteMode mode,
             std::string_view if_match, std::string* match, const MakeBody& make,
             UnindexedWrite* unindexed) {
  const bool merge = mode == WriteMode::kMerge || mode == WriteMode::kUpsertMerge;
  const bool insert_only = mode == WriteMode::kInsert;
  const bool create_if_missing =
      insert_only || mode == WriteMode::kUpsert || mode == WriteMode::kUpsertMerge;
  const bool any_version = if_match == kAnyETag;
  AccessConditions cond;
  std::optional<VisibleVersion> current;
  if (merge) {
    // Merge into the current version, written back only if it is still that one.
    auto cur = ReadVisible(core, blob, ReadPolicy::Validate());
    if (cur.ok()) {
      if (!any_version && cur->etag != *match && !SameAs(*core.blobs, blob, cur->etag, *match))
        return Failed(NoLongerMatches(if_match, cur->etag));
      cond.if_match = cur->etag;
      current = std::move(*cur);
    } else if (cur.status().IsNotFound() && create_if_missing) {
      cond.if_none_match = std::string(kAnyETag);
    } else {
      return Failed(cur.status());
    }
  } else if (insert_only) {
    cond.if_none_match = std::string(kAnyETag);
  } else if (any_version && !create_if_missing) {
    std::string etag;
    if (Try t = CurrentETag(core.blobs->Head(blob, {}), blob, &etag); t.kind != Try::kDone)
      return t;
    cond.if_match = etag;
  } else if (!any_version) {
    cond.if_match = *match;
  }
  if (unindexed != nullptr) {
    Status still = unindexed->Before();
    if (!still.ok()) return Failed(still);
  }
  auto body = make(current ? &*current : nullptr);
  if (!body.ok()) return Failed(body.status());
  PutOptions put_options;
  put_options.conditions = cond;
  AddInlineBody(put_options.metadata, *body, core.inline_body_max);
  auto put = unindexed != nullptr ? unindexed->Put(blob, *body, put_options)
                                  : core.blobs->Put(blob, *body, put_options);
  if (put.ok()) return Done(put->etag);
  const Status& s = put.status();
  if (unindexed != nullptr && unindexed->indexed()) return Failed(s);
  // Leased: a transaction at work (wait for it, or finish it if its
  // coordinator died), or another client.
  if (s.IsBusy()) return Held(s);
  if (!s.IsConflict()) return Failed(s);
  // A condition failed. An intent placed and not yet leased fails it
  // without being a race: settle it (its transaction decided aborted
  // through its record, then the intent undone).
  if (HoldsIntent(*core.blobs, blob)) return Held(Status::Busy("held by a transaction"));
  if (any_version) return Raced();  // between reading and writing
  if (insert_only) {
    auto now = ReadVisible(core, blob, ReadPolicy::Validate());
    if (now.ok()) return Failed(Status::Conflict("already exists"));
    if (!now.status().IsNotFound()) return Failed(now.status());
    return Held(s);  // deleted since: insert again
  }
  return AfterFailedMatch(core, blob, if_match, match);
}

Try TryDelete(const TxnContext& core, const std::string& blob, std::string_view if_match,
              std::string* match, UnindexedWrite* unindexed) {
  auto remove = [&](const WriteOptions& o) {
    return unindexed != nullptr ? unindexed->Delete(blob, o) : core.blobs->Delete(blob, o);
  };
  const bool any_version = if_match == kAnyETag;
  WriteOptions o;
  if (any_version) {
    auto head = core.blobs->Head(blob, {});
    if (head.status().IsCorruption()) {
      // Its stored record is damaged: there is no version to compare, and
      // removing it is the repair (docs/backends.md#what-damages-a-local-store).
      Status removed = remove({});
      return removed.ok() ? Done() : Failed(removed);
    }
    std::string etag;
    if (Try t = CurrentETag(head, blob, &etag); t.kind != Try::kDone) return t;
    o.conditions.if_match = etag;
  } else {
    o.conditions.if_match = *match;
  }
  if (unindexed != nullptr) {
    Status still = unindexed->Before();
    if (!still.ok()) return Failed(still);
  }
  Status s = remove(o);
  if (s.ok()) return Done();
  if (unindexed != nullptr && unindexed->indexed()) return Failed(s);
  if (s.IsBusy()) return Held(s);
  if (s.IsNotFound()) return Failed(Status::NotFound("not found"));
  // Any version, and an attempt whose answer was lost: gone now is gone,
  // as asked (the unconditional delete's rule); another version there is
  // deleted in turn, as after a race. With an ETag, whether that version
  // was the one deleted is not known: OutcomeUnknown stands.
  if (any_version && s.IsOutcomeUnknown()) {
    auto now = core.blobs->Head(blob, {});
    if (now.status().IsNotFound()) return Done();
    if (now.ok()) return Raced();
  }
  if (!s.IsConflict()) return Failed(s);
  if (HoldsIntent(*core.blobs, blob)) return Held(Status::Busy("held by a transaction"));
  if (any_version) return Raced();  // between reading and deleting
  return AfterFailedMatch(core, blob, if_match, match);
}

}  // namespace

std::string EntityContext(std::string_view table, std::string_view pk, std::string_view rk) {
  return "table " + std::string(table) + ", entity (PartitionKey " + QuotedForMessage(pk) +
         ", RowKey " + QuotedForMessage(rk) + ")";
}

namespace {
// Blob `blob` holds an entity whose keys are not those its name says.
Status AnotherEntitys(const std::string& blob) {
  return Status::Corruption("entity blob '" + blob + "' holds the keys of another entity");
}

// The entity of `body`, blob `blob`'s, which must have keys `pk`, `rk`, into
// `out` (the caller's result, returned by name: a read never moves it).
Status DecodeEntityOf(std::string_view body, const std::string& blob, std::string_view pk,
                      std::string_view rk, Entity& out) {
  BT_RETURN_IF_ERROR(DecodeEntityInto(body, blob, out));
  if (out.partition_key() != pk || out.row_key() != rk) return AnotherEntitys(blob);
  return Status::OK();
}
}  // namespace

Result<Entity> DecodeVisible(VisibleVersion v, const std::string& blob, std::string_view pk,
                             std::string_view rk, std::string* handles) {
  Result<Entity> out{Entity()};
  if (Status s = DecodeEntityOf(v.body, blob, pk, rk, *out); !s.ok()) {
    out = std::move(s);
    return out;
  }
  out->set_etag(std::move(v.etag));
  out->set_stale(v.stale);
  if (handles != nullptr) *handles = std::move(v.handles);
  return out;
}

Result<VisibleVersion> ReadVisible(const TxnContext& core, const std::string& blob,
                                   const ReadPolicy& policy, std::string_view listed_etag) {
  auto got = core.ReadEntityBlob(blob, policy, listed_etag);
  for (int moved = 0; got.ok(); ++moved) {
    const BlobProperties& seen = got->result.properties;
    BT_RETURN_IF_ERROR(RefuseProtocolOneMark(seen, blob));
    if (PrewritingTransaction(seen).empty()) break;
    // A transaction's intent: the version committed now, without waiting.
    if (moved >= 100) return Status::Busy("kept changing under a transaction while it was read");
    BT_ASSIGN_OR_RETURN(std::optional<IntentView> view, View(core, blob, *got));
    if (!view) {
      got = core.ReadEntityBlob(blob, ReadPolicy::Validate());
      continue;
    }
    if (view->decided) SettleLater(core, blob, got->result, view->committed);
    if (!view->exists) return Status::NotFound("not found");
    return VisibleVersion{std::move(view->body), std::move(view->etag), std::move(view->handles),
                          got->stale};
  }
  if (!got.ok()) return got.status().IsNotFound() ? Status::NotFound("not found") : got.status();
  GetResult& plain = got->result;
  std::string handles = SameAsOf(plain.properties);
  return VisibleVersion{std::move(plain.data), std::move(plain.properties.etag), std::move(handles),
                        got->stale};
}

Result<Entity> ReadVisibleEntity(const TxnContext& core, const std::string& blob,
                                 std::string_view pk, std::string_view rk, const ReadPolicy& policy,
                                 std::string_view listed_etag) {
  Result<Entity> out{Entity()};  // returned by name on every path: built once, never moved
  if (core.in_place != nullptr) {
    bool plain = false;  // decoded here; else (marked) the protocol's read, below
    Status decoded;
    Status read =
        core.in_place->ReadInPlace(blob, InPlaceData::kChecked, [&](const BlobInPlace& b) {
          if (HasMark(*b.metadata)) return Status::OK();
          plain = true;
          decoded = DecodeEntityOf(b.data, blob, pk, rk, *out);
          if (decoded.ok()) out->set_etag(std::string(b.etag));
          return Status::OK();
        });
    if (read.IsNotFound()) read = Status::NotFound("not found");
    if (read.ok() && plain) read = std::move(decoded);
    if (!read.ok()) out = std::move(read);
    if (!out.ok() || plain) return out;
  }
  Result<VisibleVersion> v = ReadVisible(core, blob, policy, listed_etag);
  if (v.ok()) {
    out = DecodeVisible(std::move(*v), blob, pk, rk, nullptr);
  } else {
    out = v.status();
  }
  return out;
}

Status VisitVisibleEntity(const TxnContext& core, const std::string& blob, std::string_view pk,
                          std::string_view rk, const ReadPolicy& policy,
                          FunctionRef<void(const EntityView&)> visit) {
  struct PropsTag;  // the views of the properties, in the thread's spare vector
  ThreadSpare<std::vector<PropertyView>, PropsTag> props;
  if (core.in_place != nullptr) {
    bool marked = false;  // then the protocol's read, below
    Status read = core.in_place->ReadInPlace(
        blob, InPlaceData::kAsItLies, [&](const BlobInPlace& b) -> Status {
          if (HasMark(*b.metadata)) {
            marked = true;
            return Status::OK();
          }
          BT_ASSIGN_OR_RETURN(EntityView view, DecodeEntityView(b.data, blob, b.etag, *props));
          if (view.partition_key() != pk || view.row_key() != rk) return AnotherEntitys(blob);
          visit(view);
          return Status::OK();
        });
    if (read.IsNotFound()) return Status::NotFound("not found");
    if (!read.ok() || !marked) return read;
  }
  BT_ASSIGN_OR_RETURN(VisibleVersion v, ReadVisible(core, blob, policy));
  BT_ASSIGN_OR_RETURN(Entity e, DecodeVisible(std::move(v), blob, pk, rk, nullptr));
  visit(ViewOf(e, *props));
  return Status::OK();
}

Result<std::string> WriteEntity(const TxnContext& core, const std::string& blob, WriteMode mode,
                                std::string_view if_match, const MakeBody& make,
                                UnindexedWrite* unindexed) {
  std::string match(if_match);  // the handle, moved on to a rewrite of the same version
  Try t = Settle(core, blob,
                 [&] { return TryWrite(core, blob, mode, if_match, &match, make, unindexed); });
  if (t.kind != Try::kDone) return t.status;
  return t.etag;
}

Status DeleteEntity(const TxnContext& core, const std::string& blob, std::string_view if_match,
                    UnindexedWrite* unindexed) {
  std::string match(if_match);
  return Settle(core, blob, [&] { return TryDelete(core, blob, if_match, &match, unindexed); })
      .status;
}

}  // namespace blobtable::internal
