// Table operations over the BlobStore: each entity is one blob, and every
// conditional operation maps onto one conditional blob request (merges are a
// read then a conditional write, retried on a race).
#include "blobtable/table.h"

#include <algorithm>

#include "model/blob_naming.h"
#include "model/entity_codec.h"
#include "model/key_rules.h"
#include "remote/inline_body.h"
#include "util/macros.h"
#include "util/parallel.h"
#include "txn/store_core.h"
#include "txn/intent_resolver.h"
#include "txn/recovery.h"

namespace blobtable {
namespace {

std::string Short(std::string_view key) {
  return key.size() <= 64 ? std::string(key) : std::string(key.substr(0, 64)) + "...";
}

std::string Context(std::string_view table, std::string_view pk, std::string_view rk) {
  return "table " + std::string(table) + ", entity (PartitionKey '" + Short(pk) +
         "', RowKey '" + Short(rk) + "')";
}

// Waits out an entity held by a transaction or another client: each Next()
// settles the transaction named on the entity (finishing or undoing it if
// its coordinator died), then backs off; Busy once
// StoreOptions::busy_timeout has passed.
class BusyWait {
 public:
  BusyWait(const internal::StoreCore& core, std::string blob) : core_(core), blob_(std::move(blob)) {}

  Status Next(const Status& busy, const std::string& ctx) {
    auto now = core_.clock->Steady();
    if (!started_) {
      started_ = true;
      deadline_ = now + core_.options.busy_timeout;
    }
    if (now >= deadline_)
      return Status::FromStorage(Code::kBusy, busy.http_status(), busy.storage_code(),
                                 ctx + ": held by a transaction in progress or another client "
                                       "for longer than the busy timeout (" + busy.message() + ")");
    // A write must not land before a decided transaction's writes: settle
    // whatever transaction holds the entity before trying again.
    auto head = core_.blobs->Head(blob_, {});
    if (head.ok()) {
      Status r = ResolveBlob(core_.Resolver(), blob_, head->properties);
      if (!r.ok() && !r.IsBusy()) return r.WithContext(ctx);
    }
    core_.Backoff(&round_);
    return Status::OK();
  }

 private:
  const internal::StoreCore& core_;
  const std::string blob_;
  bool started_ = false;
  SteadyTime deadline_;
  int round_ = 0;  // backoff only
};

bool Marked(const BlobProperties& p) { return !MarkingTransaction(p).empty(); }

// The ETag of an entity as a reader sees it (a transaction's mark or
// reservation settled first). Writes that need the entity to exist in any
// version ("*") send this ETag rather than If-Match "*": a reservation is a
// blob too, and "*" would take one for the entity. NotFound if absent.
Result<std::string> CurrentETag(const Table& table, const internal::StoreCore& core,
                                const std::string& blob, std::string_view pk,
                                std::string_view rk) {
  auto head = core.blobs->Head(blob, {});
  if (!head.ok()) return head.status();
  if (!Marked(head->properties)) return head->properties.etag;
  // A transaction's intent: a writer of "any version" writes after it, so
  // it waits for it (or settles it) as for a lease.
  if (!PrewritingTransaction(head->properties).empty())
    return Status::Busy("held by transaction " + PrewritingTransaction(head->properties));
  BT_ASSIGN_OR_RETURN(Entity settled, table.Get(pk, rk, ReadPolicy::Validate()));
  return settled.etag();
}

// True if `blob` is now at `etag_now` and that version is the one `etag`
// named (an intent rewritten plain keeps its handle: kSameAsMetadata).
bool SameAs(BlobStore& blobs, const std::string& blob, const std::string& etag_now,
            std::string_view etag) {
  auto head = blobs.Head(blob, {});
  return head.ok() && (etag_now.empty() || head->properties.etag == etag_now) &&
         SameVersion(head->properties, etag);
}

// True if `blob` holds a protocol-2 transaction's intent now: a condition
// that failed on it is decided by that transaction (wait, or settle it).
bool HoldsIntent(BlobStore& blobs, const std::string& blob) {
  auto head = blobs.Head(blob, {});
  return head.ok() && !PrewritingTransaction(head->properties).empty();
}

Status ValidateIfMatch(std::string_view if_match) {
  if (if_match.empty())
    return Status::InvalidArgument("an ETag to match (or \"*\" for any version) is required");
  return Status::OK();
}

// A reader that met a decided intent leaves rewriting it plain to the
// store's background thread: the read never waits for it (without one,
// StoreOptions::finish_in_background off, it rewrites it before it
// returns). Only that intent, at the version seen: by the time the job
// runs, the next transaction's intent may be on the entity, and it is not
// the reader's to settle.
void SettleLater(const internal::StoreCore& core, const std::string& blob, const GetResult& seen,
                 bool committed) {
  std::shared_ptr<BlobStore> blobs = core.blobs;
  ResolveContext resolver = core.Resolver();
  auto job = [blobs, blob, seen, committed, clock = &resolver.clock,
              lease = resolver.lease_seconds, inline_max = resolver.inline_body_max] {
    (void)FinishDecided({*blobs, *clock, lease, inline_max}, blob, seen, committed);
  };
  if (core.finisher) core.finisher->Submit(std::move(job));
  else job();
}

}  // namespace

Status Table::Usable() const {
  if (core_ == nullptr)
    return Status::InvalidArgument("an empty Table handle (default-constructed or moved from); "
                                   "assign one from Store::OpenTable");
  return Status::OK();
}

Result<std::string> Table::EntityBlobName(std::string_view pk, std::string_view rk) const {
  BT_RETURN_IF_ERROR(Usable());
  BT_RETURN_IF_ERROR(ValidateKey(pk, "PartitionKey"));
  BT_RETURN_IF_ERROR(ValidateKey(rk, "RowKey"));
  return naming::EntityBlobName(name_, pk, rk);
}

Result<std::string> Table::LockBlobName(std::string_view pk) const {
  BT_RETURN_IF_ERROR(Usable());
  BT_RETURN_IF_ERROR(ValidateKey(pk, "PartitionKey"));
  return naming::LockBlobName(name_, pk);
}

Result<Entity> Table::Get(std::string_view pk, std::string_view rk) const {
  BT_RETURN_IF_ERROR(Usable());
  return Get(pk, rk, core_->options.read_policy);
}

std::vector<Result<Entity>> Table::GetMany(
    const std::vector<std::pair<std::string, std::string>>& keys) const {
  return GetMany(keys, core_ ? core_->options.read_policy : ReadPolicy());
}

std::vector<Result<Entity>> Table::GetMany(
    const std::vector<std::pair<std::string, std::string>>& keys, const ReadPolicy& policy) const {
  std::vector<Result<Entity>> out(keys.size(), Status::Internal("not read"));
  const Status usable = Usable();
  if (!usable.ok()) {
    std::fill(out.begin(), out.end(), usable);
    return out;
  }
  ParallelFor(keys.size(), static_cast<size_t>(core_->parallel_reads),
              [&](size_t i) { out[i] = Get(keys[i].first, keys[i].second, policy); });
  return out;
}

Result<Entity> Table::Get(std::string_view pk, std::string_view rk,
                          const ReadPolicy& policy) const {
  return Read(pk, rk, ReadOptions(policy, ""));
}

Result<Entity> Table::Read(std::string_view pk, std::string_view rk, const ReadOptions& read,
                           std::string* handles) const {
  // Named in errors only: built when one needs it (reads are hot).
  auto ctx = [&] { return Context(name_, pk, rk); };
  auto name = EntityBlobName(pk, rk);
  if (!name.ok()) return name.status().WithContext(ctx());
  auto blob = core_->blobs->Get(*name, read);
  // Marked by a transaction: wait for its outcome (or, if its coordinator
  // died, settle it), then read again. Reading around the mark could hand
  // out a version that a committed write is about to replace. Only the
  // deadline ends the wait; the backoff has its own counter. A stale answer
  // from the cache is handed out as it is: storage, which would settle the
  // mark, is out of reach.
  const ReadOptions again(ReadPolicy::Validate(), "");
  SteadyTime deadline{};
  int round = 0;
  // Until the blob holds neither: a protocol-1 transaction settled may have
  // been followed by a protocol-2 intent, which a reader only views (it never
  // settles one undecided, as the writer the loop below stands for would).
  for (int pass = 0;; ++pass) {
    // A protocol-2 intent: the version committed now, without waiting.
    for (int moved = 0; blob.ok() && !PrewritingTransaction(blob->properties).empty(); ++moved) {
      if (moved >= 100)
        return Status::Busy(ctx() + ": kept changing under a transaction while it was read");
      Result<std::optional<IntentView>> view = std::optional<IntentView>();
      if (blob->stale) {
        // Storage is out of reach: the version before the transaction.
        auto prev = PreviousVersion(*name, *blob);
        if (prev.ok()) view = std::optional<IntentView>(std::move(*prev));
        else view = prev.status();
      } else {
        view = ViewIntent(*core_->blobs, *name, *blob);
      }
      if (!view.ok()) return view.status().WithContext(ctx());
      if (!*view) {
        blob = core_->blobs->Get(*name, again);
        continue;
      }
      if ((*view)->decided) SettleLater(*core_, *name, *blob, (*view)->committed);
      if (!(*view)->exists) return Status::NotFound(ctx() + ": not found");
      if (handles != nullptr) *handles = (*view)->handles;
      BT_ASSIGN_OR_RETURN(Entity e, DecodeEntity((*view)->body, *name));
      e.set_etag((*view)->etag);
      e.set_stale(blob->stale);
      return e;
    }
    // Protocol 1's marks: settled as a writer would, waiting while in progress.
    while (blob.ok() && !blob->stale && Marked(blob->properties) &&
           PrewritingTransaction(blob->properties).empty()) {
      const std::string seen = blob->properties.etag;
      Status r = ResolveBlob(core_->Resolver(), *name, blob->properties);
      if (!r.ok() && !r.IsBusy()) return r.WithContext(ctx());
      if (r.ok()) {
        blob = core_->blobs->Get(*name, again);
        if (!blob.ok() || blob->properties.etag != seen) continue;  // moved on: look at it
      }
      if (deadline == SteadyTime{}) deadline = core_->clock->Steady() + core_->options.busy_timeout;
      if (core_->clock->Steady() >= deadline)
        return Status::Busy(ctx() + ": a transaction holding it stayed in progress for longer than "
                                  "the busy timeout");
      core_->Backoff(&round);
      blob = core_->blobs->Get(*name, again);
    }
    if (!blob.ok() || PrewritingTransaction(blob->properties).empty()) break;
    if (pass >= 100)
      return Status::Busy(ctx() + ": kept changing under a transaction while it was read");
  }
  if (!blob.ok()) {
    if (blob.status().IsNotFound()) return Status::NotFound(ctx() + ": not found");
    return blob.status().WithContext(ctx());
  }
  BT_ASSIGN_OR_RETURN(Entity e, DecodeEntity(blob->data, *name));
  if (e.partition_key() != pk || e.row_key() != rk)
    return Status::Corruption("entity blob '" + *name + "' holds the keys of another entity");
  e.set_etag(blob->properties.etag);
  e.set_stale(blob->stale);
  if (handles != nullptr) *handles = SameAsOf(blob->properties);
  return e;
}

Result<Entity> Table::Insert(const Entity& entity) const {
  return Write(entity, "", /*merge=*/false, /*create_if_missing=*/true);
}

Result<Entity> Table::Replace(const Entity& entity, std::string_view if_match) const {
  BT_RETURN_IF_ERROR(ValidateIfMatch(if_match));
  return Write(entity, if_match, /*merge=*/false, /*create_if_missing=*/false);
}

Result<Entity> Table::Merge(const Entity& entity, std::string_view if_match) const {
  BT_RETURN_IF_ERROR(ValidateIfMatch(if_match));
  return Write(entity, if_match, /*merge=*/true, /*create_if_missing=*/false);
}

Result<Entity> Table::Replace(const Entity& entity) const {
  auto etag = OwnETag(entity, "Replace(entity)");
  if (!etag.ok())
    return etag.status().WithContext(Context(name_, entity.partition_key(), entity.row_key()));
  return Replace(entity, *etag);
}

Result<Entity> Table::Merge(const Entity& entity) const {
  auto etag = OwnETag(entity, "Merge(entity)");
  if (!etag.ok())
    return etag.status().WithContext(Context(name_, entity.partition_key(), entity.row_key()));
  return Merge(entity, *etag);
}

Result<Entity> Table::Upsert(const Entity& entity) const {
  return Write(entity, kAnyETag, /*merge=*/false, /*create_if_missing=*/true);
}

Result<Entity> Table::UpsertMerge(const Entity& entity) const {
  return Write(entity, kAnyETag, /*merge=*/true, /*create_if_missing=*/true);
}

// The one write path. `if_match` empty means insert (must not exist); "*"
// means any existing version (or, with create_if_missing, none).
Result<Entity> Table::Write(const Entity& entity, std::string_view if_match, bool merge,
                            bool create_if_missing) const {
  BT_RETURN_IF_ERROR(Usable());
  const std::string ctx = Context(name_, entity.partition_key(), entity.row_key());
  Status valid = ValidateEntity(entity);
  if (!valid.ok()) return valid.WithContext(ctx);
  auto name = EntityBlobName(entity.partition_key(), entity.row_key());
  if (!name.ok()) return name.status().WithContext(ctx);
  const bool insert_only = if_match.empty();
  const bool any_version = if_match == kAnyETag;
  BusyWait busy(*core_, *name);
  std::string match(if_match);  // the handle, moved on to a rewrite of the same version

  for (int attempt = 0; attempt < std::max(1, core_->options.max_merge_attempts); ++attempt) {
    Entity stored = entity;
    AccessConditions cond;
    if (merge) {
      // Read the current version, merge into it, write it back only if it is
      // still that version.
      auto current = Get(entity.partition_key(), entity.row_key(), ReadPolicy::Validate());
      if (current.ok()) {
        if (!any_version && current->etag() != match &&
            !SameAs(*core_->blobs, *name, current->etag(), match))
          return Status::Conflict(ctx + ": ETag " + std::string(if_match) +
                                  " no longer matches (now " + current->etag() + ")");
        stored = std::move(*current);
        for (const auto& [prop, value] : entity.properties()) stored.Set(prop, value);
        // The union may break a rule neither part did (more than 252 properties).
        Status merged_ok = ValidateEntity(stored);
        if (!merged_ok.ok()) return merged_ok.WithContext(ctx + ": after merging");
        cond.if_match = stored.etag();
      } else if (current.status().IsNotFound() && create_if_missing) {
        cond.if_none_match = std::string(kAnyETag);
      } else {
        return current.status();
      }
    } else if (insert_only) {
      cond.if_none_match = std::string(kAnyETag);
    } else if (any_version && !create_if_missing) {
      auto etag = CurrentETag(*this, *core_, *name, entity.partition_key(), entity.row_key());
      if (etag.status().IsNotFound()) return Status::NotFound(ctx + ": not found");
      if (etag.status().IsBusy()) {
        BT_RETURN_IF_ERROR(busy.Next(etag.status(), ctx));
        --attempt;
        continue;
      }
      if (!etag.ok()) return etag.status().WithContext(ctx);
      cond.if_match = *etag;
    } else if (!any_version) {
      cond.if_match = match;
    }
    stored.set_timestamp(
        std::chrono::time_point_cast<Ticks>(core_->clock->Now()));
    auto body = EncodeEntity(stored);
    if (!body.ok()) return body.status();
    PutOptions put_options;
    put_options.conditions = cond;
    AddInlineBody(put_options.metadata, *body, core_->inline_body_max);
    auto put = core_->blobs->Put(*name, *body, put_options);
    if (put.ok()) {
      stored.set_etag(put->etag);
      return stored;
    }
    const Status& s = put.status();
    if (s.IsBusy()) {
      // Leased: a transaction at work (wait for it, or finish it if its
      // coordinator died), or another client.
      BT_RETURN_IF_ERROR(busy.Next(s, ctx));
      --attempt;
      continue;
    }
    if (!s.IsConflict()) return s.WithContext(ctx);
    // A condition failed: say which, or retry a merge that lost a race. The
    // answer is about the entity as a reader sees it, so a transaction's
    // mark or reservation is settled first (Get does that).
    // An intent placed and not yet leased fails the condition without being
    // a race: settle it (undone: its transaction can no longer commit).
    if (HoldsIntent(*core_->blobs, *name)) {
      BT_RETURN_IF_ERROR(busy.Next(Status::Busy("held by a transaction"), ctx));
      --attempt;
      continue;
    }
    if (any_version) continue;  // raced between reading and writing: again
    auto now = Get(entity.partition_key(), entity.row_key(), ReadPolicy::Validate());
    if (!now.ok() && !now.status().IsNotFound()) return now.status();
    if (insert_only) {
      if (now.ok()) return Status::Conflict(ctx + ": already exists");
      BT_RETURN_IF_ERROR(busy.Next(s, ctx));  // a reservation, gone now: insert again
      --attempt;
      continue;
    }
    if (!now.ok()) return Status::NotFound(ctx + ": not found");
    if (SameAs(*core_->blobs, *name, now->etag(), match)) {
      match = now->etag();  // the version it named, rewritten: write at it
      continue;
    }
    return Status::Conflict(ctx + ": ETag " + std::string(if_match) + " no longer matches (now " +
                            now->etag() + ")");
  }
  return Status::Conflict(ctx + ": gave up after " +
                          std::to_string(core_->options.max_merge_attempts) +
                          " attempts, each raced by another writer");
}

Status Table::Delete(std::string_view pk, std::string_view rk, std::string_view if_match) const {
  BT_RETURN_IF_ERROR(Usable());
  const std::string ctx = Context(name_, pk, rk);
  BT_RETURN_IF_ERROR(ValidateIfMatch(if_match));
  auto name = EntityBlobName(pk, rk);
  if (!name.ok()) return name.status().WithContext(ctx);
  const bool any_version = if_match == kAnyETag;
  BusyWait busy(*core_, *name);
  std::string match(if_match);  // the handle, moved on to a rewrite of the same version
  for (int attempt = 0; attempt < std::max(1, core_->options.max_merge_attempts); ++attempt) {
    WriteOptions o;
    if (any_version) {
      auto etag = CurrentETag(*this, *core_, *name, pk, rk);
      if (etag.status().IsNotFound()) return Status::NotFound(ctx + ": not found");
      if (etag.status().IsBusy()) {
        BT_RETURN_IF_ERROR(busy.Next(etag.status(), ctx));
        --attempt;
        continue;
      }
      if (etag.status().code() == Code::kCorruption) {
        // Its stored record is damaged: there is no version to compare, and
        // removing it is the repair (README "what damages a store").
        Status removed = core_->blobs->Delete(*name, {});
        return removed.ok() ? removed : removed.WithContext(ctx);
      }
      if (!etag.ok()) return etag.status().WithContext(ctx);
      o.conditions.if_match = *etag;
    } else {
      o.conditions.if_match = match;
    }
    Status s = core_->blobs->Delete(*name, o);
    while (s.IsBusy()) {
      BT_RETURN_IF_ERROR(busy.Next(s, ctx));
      s = core_->blobs->Delete(*name, o);
    }
    if (s.ok()) return s;
    if (s.IsNotFound()) return Status::NotFound(ctx + ": not found");
    // Any version, and an attempt whose answer was lost: gone now is gone,
    // as asked (the unconditional delete's rule); another version there is
    // deleted in turn, as after a race. With an ETag, whether that version
    // was the one deleted is not known: OutcomeUnknown stands.
    if (any_version && s.code() == Code::kOutcomeUnknown) {
      auto now = core_->blobs->Head(*name, {});
      if (now.status().IsNotFound()) return Status::OK();
      if (now.ok()) continue;
    }
    if (!s.IsConflict()) return s.WithContext(ctx);
    if (HoldsIntent(*core_->blobs, *name)) {  // an intent not yet leased: settle it
      BT_RETURN_IF_ERROR(busy.Next(Status::Busy("held by a transaction"), ctx));
      --attempt;
      continue;
    }
    if (any_version) continue;  // raced between reading and deleting: again
    auto now = Get(pk, rk, ReadPolicy::Validate());
    if (now.status().IsNotFound()) return Status::NotFound(ctx + ": not found");
    if (!now.ok()) return now.status();
    if (SameAs(*core_->blobs, *name, now->etag(), match)) {
      match = now->etag();  // the version it named, rewritten: delete at it
      continue;
    }
    return Status::Conflict(ctx + ": ETag " + std::string(if_match) + " no longer matches (now " +
                            now->etag() + ")");
  }
  return Status::Conflict(ctx + ": gave up after " +
                          std::to_string(core_->options.max_merge_attempts) +
                          " attempts, each raced by another writer");
}

}  // namespace blobtable
